package cluster

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ordoplane/ordo/cmd/agent"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/servers"
	"github.com/ordoplane/ordo/storage/archive"
	"github.com/ordoplane/ordo/test/testagent"
)

// timeout bounds every wait: generous, for a loaded two-core machine under -race.
const timeout = 20 * time.Second

// server is one agent of the test cluster.
type server = testagent.Server

// startServer starts one server of a three-server test cluster.
func startServer(t *testing.T, name string, join []string, edit ...func(*agent.Config)) *server {
	t.Helper()
	cfg := testagent.ServerConfig(t.TempDir())
	cfg.Name = name
	cfg.BootstrapExpect = 3
	cfg.Join = join
	for _, f := range edit {
		f(&cfg)
	}
	return testagent.StartServer(t, cfg)
}

// noScheduler turns a server's scheduler off, for tests that place nothing.
func noScheduler(cfg *agent.Config) { cfg.Scheduler.Disabled = true }

// writeStats counts what writes were answered, for the failure log.
type writeStats struct {
	mu       sync.Mutex
	statuses map[int]int
	errs     int
	lastErr  string
	samples  map[int]string
}

func newWriteStats() *writeStats {
	return &writeStats{statuses: map[int]int{}, samples: map[int]string{}}
}

func (w *writeStats) record(res testagent.WriteResult, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err != nil {
		w.errs++
		w.lastErr = err.Error()
		return
	}
	w.statuses[res.Status]++
	if res.Status != http.StatusOK && w.samples[res.Status] == "" {
		w.samples[res.Status] = res.Body
	}
}

func (w *writeStats) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var parts []string
	for _, code := range slices.Sorted(maps.Keys(w.statuses)) {
		parts = append(parts, fmt.Sprintf("%d×%d", code, w.statuses[code]))
	}
	s := strings.Join(parts, " ") + fmt.Sprintf(" transport-errors×%d", w.errs)
	if w.lastErr != "" {
		s += " (last: " + w.lastErr + ")"
	}
	for _, code := range slices.Sorted(maps.Keys(w.samples)) {
		s += fmt.Sprintf("\n  %d: %s", code, w.samples[code])
	}
	return s
}

// write applies name with Idempotency-Key key through targets, moving to the
// next target after each failure, until a 200 or until ctx ends. A 503, a
// 5xx or a transport error leaves the write unacknowledged and is retried
// with the same key; a 4xx fails t.
func write(ctx context.Context, t *testing.T, c *testagent.Client, targets func() []string, name, key string, st *writeStats) (testagent.WriteResult, bool) {
	for attempt := 0; ; attempt++ {
		addrs := targets()
		res, err := c.PutNamespace(ctx, addrs[attempt%len(addrs)], name, key)
		st.record(res, err)
		switch {
		case err == nil && res.Status == http.StatusOK:
			return res, true
		case err == nil && res.Status >= 400 && res.Status < 500:
			t.Errorf("write %s: %d %s", name, res.Status, res.Body)
			return res, false
		case err != nil && ctx.Err() != nil:
			return res, false
		}
		// Pace retries while there is no leader; this is not a wait for a state.
		select {
		case <-ctx.Done():
			return res, false
		case <-time.After(25 * time.Millisecond):
		}
	}
}

// wave writes names with 8 goroutines and records each acknowledged one.
// Cancel ctx to end it early; the test's cleanup waits for its goroutines.
func wave(ctx context.Context, t *testing.T, c *testagent.Client, targets func() []string, names []string, acks *testagent.Acks, st *writeStats) *sync.WaitGroup {
	work := make(chan string)
	var wg sync.WaitGroup
	t.Cleanup(wg.Wait)
	for range 8 {
		wg.Go(func() {
			for name := range work {
				if res, ok := write(ctx, t, c, targets, name, "key-"+name, st); ok {
					acks.Add(name, res.Index)
				}
			}
		})
	}
	wg.Go(func() {
		defer close(work)
		for _, n := range names {
			select {
			case work <- n:
			case <-ctx.Done():
				return
			}
		}
	})
	return &wg
}

func names(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s-%04d", prefix, i)
	}
	return out
}

// waitForCluster waits until one server leads and every server sees three
// voters (through its own API) and all three registered in its servers
// projection, with the default namespace created.
func waitForCluster(t *testing.T, c *testagent.Client, list []*server) {
	t.Helper()
	ids := map[string]string{}
	for _, s := range list {
		ids[s.A.ID()] = s.Raft
	}
	var why string // what the last check found missing, for the failure
	formed := testagent.Poll(timeout, func() bool {
		why = clusterMissing(c, list, ids)
		return why == ""
	})
	if !formed {
		t.Fatalf("timed out after %v waiting for a leader and three registered voters on every server: %s", timeout, why)
	}
}

// clusterMissing returns what keeps list from being a formed cluster, or "".
func clusterMissing(c *testagent.Client, list []*server, ids map[string]string) string {
	if testagent.LeaderOf(list) == nil {
		return "no single leader"
	}
	for _, s := range list {
		cfg, err := c.RaftConfiguration(s.HTTP)
		if err != nil {
			return fmt.Sprintf("%s: raft configuration: %v", s.Name, err)
		}
		if len(cfg) != 3 {
			return fmt.Sprintf("%s: raft configuration has %d servers: %+v", s.Name, len(cfg), cfg)
		}
		for _, rs := range cfg {
			if !rs.Voter || ids[rs.ID] != rs.Address {
				return fmt.Sprintf("%s: raft configuration holds %+v", s.Name, rs)
			}
		}
		snap := s.A.Store().Snapshot()
		regs, err := servers.List(projections.NewView(snap))
		snap.Close()
		if err != nil {
			return fmt.Sprintf("%s: servers projection: %v", s.Name, err)
		}
		if len(regs) != 3 {
			return fmt.Sprintf("%s: servers projection holds %d servers (applied index %d)", s.Name, len(regs), s.A.FSM().Applied())
		}
		for _, r := range regs {
			if ids[r.ID] != r.RaftAddr {
				return fmt.Sprintf("%s: servers projection holds %+v", s.Name, *r)
			}
		}
		if listed, err := c.NamespaceNames(s.HTTP, true); err != nil || !listed["default"] {
			return fmt.Sprintf("%s: no default namespace (err %v)", s.Name, err)
		}
	}
	return ""
}

// waitForConvergence waits until every server has applied the same index, at
// least min, and returns it.
func waitForConvergence(t *testing.T, list []*server, min uint64) uint64 {
	t.Helper()
	var applied uint64
	testagent.WaitFor(t, timeout, fmt.Sprintf("every server to apply the same index ≥ %d", min), func() bool {
		applied = list[0].A.FSM().Applied()
		if applied < min {
			return false
		}
		for _, s := range list[1:] {
			if s.A.FSM().Applied() != applied {
				return false
			}
		}
		return true
	})
	return applied
}

// TestFailover forms a three-server cluster, writes through a follower,
// kills the leader during a second wave of writes, restarts it on its data
// directory, and checks on every server that each acknowledged write was
// archived exactly once and that the projections equal a rebuild.
func TestFailover(t *testing.T) {
	c := testagent.NewClient(10 * time.Second)
	defer c.Close()

	a := startServer(t, "a", nil)
	b := startServer(t, "b", []string{a.HTTP})
	cs := startServer(t, "c", []string{a.HTTP})
	all := []*server{a, b, cs}
	waitForCluster(t, c, all)

	acks := testagent.NewAcks()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	// Wave 1: through one follower, which forwards to the leader.
	leader := testagent.WaitForLeader(t, all)
	var follower *server
	for _, s := range all {
		if s != leader {
			follower = s
			break
		}
	}
	st1 := newWriteStats()
	start := time.Now()
	const wave1 = 100
	wave(ctx, t, c, func() []string { return []string{follower.HTTP} }, names("w1", wave1), acks, st1).Wait()
	t.Logf("wave 1: %d of %d acknowledged through follower %s in %v; answers: %s",
		acks.Len(), wave1, follower.Name, time.Since(start).Round(time.Millisecond), st1)
	if acks.Len() != wave1 {
		t.Fatalf("wave 1: %d of %d writes acknowledged", acks.Len(), wave1)
	}

	t.Run("IdempotentRetry", func(t *testing.T) { testIdempotentRetry(t, c, all) })
	t.Run("FollowerReads", func(t *testing.T) { testFollowerReads(t, c, all) })

	// Wave 2: against the two followers while the leader is killed.
	victim := testagent.WaitForLeader(t, all)
	var survivors []*server
	var targets []string
	for _, s := range all {
		if s != victim {
			survivors = append(survivors, s)
			targets = append(targets, s.HTTP)
		}
	}
	before := acks.Len()
	st2 := newWriteStats()
	// 60 writes before the kill, at least 30 after it, and more to
	// carry on through the restart.
	const wave2 = 200
	w2 := wave(ctx, t, c, func() []string { return targets }, names("w2", wave2), acks, st2)
	testagent.WaitFor(t, timeout, "60 writes of wave 2", func() bool { return acks.Len() >= before+60 })
	// Kill whichever server leads now (leadership may have moved under load).
	if l := testagent.WaitForLeader(t, all); l != victim {
		t.Logf("leadership moved from %s to %s during wave 2; killing %s", victim.Name, l.Name, l.Name)
		victim = l
		survivors = survivors[:0]
		for _, s := range all {
			if s != victim {
				survivors = append(survivors, s)
			}
		}
	}
	atKill := acks.Len()
	killStart := time.Now()
	victim.Stop(t)
	t.Logf("killed leader %s after %d wave-2 acks (shutdown took %v)", victim.Name, atKill-before, time.Since(killStart).Round(time.Millisecond))

	newLeader := testagent.WaitForLeader(t, survivors)
	t.Logf("new leader %s after %v", newLeader.Name, time.Since(killStart).Round(time.Millisecond))
	testagent.WaitFor(t, timeout, "writes to resume after the failover", func() bool {
		return acks.Len() >= atKill+30 || acks.Len() == before+wave2
	})

	victim.Restart(t)
	w2.Wait()
	t.Logf("wave 2: %d of %d acknowledged (%d after the kill); answers: %s",
		acks.Len()-before, wave2, acks.Len()-atKill, st2)
	if got := acks.Len() - before; got != wave2 {
		t.Errorf("wave 2: only %d of %d writes acknowledged despite retries", got, wave2)
	}

	applied := waitForConvergence(t, all, acks.Max())
	t.Logf("all servers at index %d; %d writes acknowledged", applied, acks.Len())
	checkServers(t, c, all, acks.Names())
}

// checkServers asserts, on every server, that each acknowledged write was
// archived exactly once and is listed, and that the projections equal a
// rebuild from the archive and agree between servers.
func checkServers(t *testing.T, c *testagent.Client, list []*server, acked map[string]uint64) {
	t.Helper()
	ids := map[string]*server{}
	for _, s := range list {
		ids[s.A.ID()] = s
	}
	sums := map[string]map[string][32]byte{}
	indexes := map[string]uint64{}
	for _, s := range list {
		snap := s.A.Store().Snapshot()
		counts, err := testagent.Upserts(snap)
		if err != nil {
			t.Fatalf("%s: %v", s.Name, err)
		}
		testagent.CheckAcked(t, s.Name+" archive", acked, counts)
		listed, err := testagent.StoreNamespaces(snap)
		if err != nil {
			t.Fatalf("%s: %v", s.Name, err)
		}
		testagent.CheckListed(t, s.Name+" namespaces projection", acked, listed)
		regs, err := servers.List(projections.NewView(snap))
		if err != nil {
			t.Fatalf("%s: %v", s.Name, err)
		}
		for _, r := range regs {
			if o := ids[r.ID]; o == nil || o.Raft != r.RaftAddr || o.HTTP != r.HTTPAddr {
				t.Errorf("%s: servers projection holds %+v, not one of the cluster's servers", s.Name, *r)
			}
		}
		if len(regs) != len(list) {
			t.Errorf("%s: servers projection holds %d servers, want %d", s.Name, len(regs), len(list))
		}
		sums[s.Name] = testagent.CheckProjections(t, snap, t.TempDir())
		indexes[s.Name], err = projections.NewView(snap).AppliedIndex()
		if err != nil {
			t.Fatal(err)
		}
		snap.Close()

		// The same through the API, read locally on each server.
		httpCounts, err := c.LogUpserts(s.HTTP)
		if err != nil {
			t.Fatalf("%s: %v", s.Name, err)
		}
		testagent.CheckAcked(t, s.Name+" /v1/operator/log", acked, httpCounts)
		httpListed, err := c.NamespaceNames(s.HTTP, true)
		if err != nil {
			t.Fatalf("%s: %v", s.Name, err)
		}
		testagent.CheckListed(t, s.Name+" /v1/namespaces?stale", acked, httpListed)
	}
	// Servers at the same index hold the same projections.
	for _, s := range list[1:] {
		if indexes[s.Name] != indexes[list[0].Name] {
			t.Logf("%s at %d, %s at %d: not comparing their checksums", s.Name, indexes[s.Name], list[0].Name, indexes[list[0].Name])
			continue
		}
		for p, sum := range sums[list[0].Name] {
			if sums[s.Name][p] != sum {
				t.Errorf("projection %s differs between %s and %s at index %d", p, list[0].Name, s.Name, indexes[s.Name])
			}
		}
	}
}

// testIdempotentRetry checks that repeating a write with the same
// Idempotency-Key, after it succeeded or while it is in flight, answers
// with the first write's index and archives nothing more.
func testIdempotentRetry(t *testing.T, c *testagent.Client, list []*server) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	st := newWriteStats()
	leader := testagent.WaitForLeader(t, list)
	var follower *server
	for _, s := range list {
		if s != leader {
			follower = s
			break
		}
	}
	viaFollower := func() []string { return []string{follower.HTTP} }

	first, ok := write(ctx, t, c, viaFollower, "idem-once", "idem-once-key", st)
	if !ok {
		t.Fatalf("first write not acknowledged: %s", st)
	}
	// Whichever server led when it committed, every server now holds it.
	waitForConvergence(t, list, first.Index)
	lenBefore := map[*server]uint64{}
	for _, s := range list {
		lenBefore[s] = archiveLen(t, s)
	}
	for _, via := range []*server{follower, leader} {
		res, ok := write(ctx, t, c, func() []string { return []string{via.HTTP} }, "idem-once", "idem-once-key", st)
		if !ok {
			t.Fatalf("retry through %s not acknowledged: %s", via.Name, st)
		}
		if res.Index != first.Index || !res.Duplicate {
			t.Errorf("retry through %s: index %d duplicate %v, want index %d duplicate true", via.Name, res.Index, res.Duplicate, first.Index)
		}
	}
	waitForConvergence(t, list, first.Index)
	for _, s := range list {
		if after := archiveLen(t, s); after != lenBefore[s] {
			t.Errorf("retries grew the archive of %s from %d to %d events", s.Name, lenBefore[s], after)
		}
	}

	// Concurrent copies of one request race past the handler's check; the
	// FSM's command record must still let only one of them append.
	const copies = 8
	var wg sync.WaitGroup
	results := make([]testagent.WriteResult, copies)
	var failed atomic.Int32
	for i := range copies {
		wg.Go(func() {
			via := list[i%len(list)]
			res, ok := write(ctx, t, c, func() []string { return []string{via.HTTP} }, "idem-race", "idem-race-key", st)
			if !ok {
				failed.Add(1)
			}
			results[i] = res
		})
	}
	wg.Wait()
	if failed.Load() > 0 {
		t.Fatalf("%d concurrent copies not acknowledged: %s", failed.Load(), st)
	}
	var fresh int
	for i, res := range results {
		if res.Index != results[0].Index {
			t.Errorf("copy %d answered index %d, copy 0 index %d", i, res.Index, results[0].Index)
		}
		if !res.Duplicate {
			fresh++
		}
	}
	// One copy appended; the others were answered as duplicates (all of
	// them, when the appending copy's own answer was lost and it retried).
	if fresh > 1 {
		t.Errorf("%d of %d concurrent copies reported a fresh write, want at most 1", fresh, copies)
	}

	idx := max(first.Index, results[0].Index)
	waitForConvergence(t, list, idx)
	for _, s := range list {
		snap := s.A.Store().Snapshot()
		counts, err := testagent.Upserts(snap)
		snap.Close()
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []string{"idem-once", "idem-race"} {
			if counts[n] != 1 {
				t.Errorf("%s: %s upserted %d times, want 1", s.Name, n, counts[n])
			}
		}
	}
	if t.Failed() {
		t.Logf("answers: %s", st)
	}
}

func archiveLen(t *testing.T, s *server) uint64 {
	t.Helper()
	n, err := archive.Len(s.A.Store())
	if err != nil {
		t.Fatal(err)
	}
	return n
}
