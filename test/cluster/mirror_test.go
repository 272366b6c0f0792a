// This file holds the Kafka mirror's end-to-end tests: real agents
// (one, or a three-server cluster over loopback TCP) mirroring to an
// in-process Kafka (kfake) over TCP, with faults injected into the broker
// and leaders failed over.

package cluster

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/ordoplane/ordo/cmd/agent"
	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/processors/mirror"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/storage/archive"
	"github.com/ordoplane/ordo/test/testagent"
)

// mirrorTimeout bounds each wait on the mirror: a failure guard, not a pace.
const mirrorTimeout = 60 * time.Second

func startKafka(t *testing.T) *kfake.Cluster {
	t.Helper()
	k, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.Close)
	return k
}

// upserts is a command that upserts namespaces ns-<first> … in one entry,
// names wrapping at names, so that every namespace gets many events.
type upserts struct {
	first, n, names int
}

func (u upserts) Validate() error { return nil }

func (u upserts) Decide(_ projections.View, now time.Time, _ commands.IDs) (commands.Decision, error) {
	var d commands.Decision
	for i := range u.n {
		k := u.first + i
		d.Events = append(d.Events, &events.NamespaceUpserted{Namespace: events.Namespace{
			Name: fmt.Sprint("ns-", k%u.names), Description: fmt.Sprint("rev ", k)}})
	}
	return d, nil
}

// lastPosition returns the position of the last archived event of a.
func lastPosition(t *testing.T, a *agent.Agent) mirror.Position {
	t.Helper()
	var p mirror.Position
	last, err := archive.Last(a.Store())
	if err != nil {
		t.Fatal(err)
	}
	err = archive.Scan(a.Store(), last, 0, func(i uint64, s uint32, _ []byte) error {
		p = mirror.Position{Index: i, Seq: s}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func verify(t *testing.T, a *agent.Agent) mirror.Report {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*mirrorTimeout)
	defer cancel()
	snap := a.Store().Snapshot()
	defer snap.Close()
	rep, err := mirror.Verify(ctx, a.Mirror().Settings(), snap, mirror.VerifyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n, _ := archive.Len(snap)
	if !rep.OK || rep.Pending != 0 || uint64(rep.Checked) != n || uint64(rep.Records) != n {
		t.Fatalf("verify against %d archived events: %+v", n, rep)
	}
	return rep
}

// TestAgentMirrorKafkaDown runs one server with a mirror block: events
// reach the topic; while every produce fails, writes still succeed and
// the status shows the lag and the error; once Kafka answers the mirror
// catches up, and the API's verify agrees.
func TestAgentMirrorKafkaDown(t *testing.T) {
	k := startKafka(t)
	cfg := testagent.ServerConfig(t.TempDir())
	cfg.BootstrapExpect = 1
	cfg.Mirror = &mirror.Settings{Brokers: k.ListenAddrs(), Topic: "ordo.events", Partitions: 3, Timeout: time.Second}
	a, err := agent.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Shutdown()
	c := testagent.NewClient(10 * time.Second)
	defer c.Close()
	ctx := t.Context()
	write := func(from, n int) {
		t.Helper()
		for i := from; i < from+n; i++ {
			res, err := c.PutNamespace(ctx, a.HTTPAddr(), fmt.Sprint("ns-", i), "")
			if err != nil || res.Status != 200 {
				t.Fatalf("write %d: %v %+v", i, err, res)
			}
		}
	}
	status := func() mirror.Status {
		var st mirror.Status
		if code, err := c.GetJSON(a.HTTPAddr(), "/v1/operator/mirror", &st); err != nil || code != 200 {
			t.Fatalf("mirror status: %d %v", code, err)
		}
		return st
	}
	testagent.WaitFor(t, mirrorTimeout, "a leader", func() bool { return a.Node().IsLeader() })
	write(0, 30)
	testagent.WaitFor(t, mirrorTimeout, "mirrored", func() bool { return a.Mirror().Mirrored() == lastPosition(t, a) })
	if st := status(); !st.Enabled || !st.Running || !st.BrokersReachable || st.LagEvents != 0 || st.MirroredIndex == 0 {
		t.Fatalf("status %+v", st)
	}

	var down atomic.Bool
	down.Store(true)
	k.ControlKey(int16(kmsg.Produce), func(kmsg.Request) (kmsg.Response, error, bool) {
		k.KeepControl()
		if down.Load() {
			return nil, errors.New("kafka is down"), true
		}
		return nil, nil, false
	})
	write(30, 100) // every write is answered while Kafka refuses
	testagent.WaitFor(t, mirrorTimeout, "the error in the status", func() bool {
		st := status()
		return st.LastError != "" && st.LagEvents > 0
	})
	down.Store(false)
	testagent.WaitFor(t, mirrorTimeout, "caught up", func() bool { return a.Mirror().Mirrored() == lastPosition(t, a) })
	verify(t, a)

	var rep mirror.Report
	if code, err := postJSON(a.HTTPAddr(), "/v1/operator/mirror/verify", &rep); err != nil || code != 200 || !rep.OK {
		t.Fatalf("POST verify: %d %v %+v", code, err, rep)
	}
}

// TestClusterMirrorFailover is the test: a workload of events
// (2,000 by default; 100,000 with ORDO_MIRROR_EVENTS=100000 or the long
// tests) on a three-server cluster whose mirror is killed at random points
// — the broker drops produce and commit requests at seeded random moments,
// so sessions die mid-transaction and restart — while the leader is
// failed over twice (stopped, and brought back later). Then the topic
// holds every archived event exactly once, each entity's in index order.
// A run in which no mirror died fails: it would not have tested a restart.
// 2,000 events are 20 entries, 200 events written while a leader is
// down, and at least one death (the seeded draws kill the third produce
// or commit); 10,000 checked the same for about 20 CPU-s under -race
// instead of 4.
func TestClusterMirrorFailover(t *testing.T) {
	total := 2_000
	if testagent.Long() {
		total = 100_000
	}
	if v := os.Getenv("ORDO_MIRROR_EVENTS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			t.Fatalf("ORDO_MIRROR_EVENTS=%q", v)
		}
		total = n
	}
	const perEntry = 100
	k := startKafka(t)
	rng := rand.New(rand.NewPCG(6, 100_000))
	var mu sync.Mutex
	kills := 0
	chaos := func(kmsg.Request) (kmsg.Response, error, bool) {
		k.KeepControl()
		mu.Lock()
		defer mu.Unlock()
		if rng.IntN(4) == 0 {
			kills++
			return nil, errors.New("injected: the mirror dies here"), true
		}
		return nil, nil, false
	}
	k.ControlKey(int16(kmsg.Produce), chaos)
	k.ControlKey(int16(kmsg.EndTxn), chaos)

	settings := &mirror.Settings{Brokers: k.ListenAddrs(), Topic: "ordo.events", Partitions: 6}
	servers := make([]*server, 3)
	for i := range servers {
		var join []string
		if i > 0 {
			join = []string{servers[0].HTTP}
		}
		servers[i] = startMirrorServer(t, fmt.Sprint("s", i+1), join, settings)
	}
	leader := testagent.WaitForLeader(t, servers)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	submitted := 0
	submit := func(upTo int) {
		t.Helper()
		for submitted < upTo {
			l := testagent.LeaderOf(servers)
			if l == nil {
				l = testagent.WaitForLeader(t, servers)
			}
			_, err := l.A.Pipeline().Run(ctx, "mirror-test", commands.Request{},
				upserts{first: submitted, n: perEntry, names: 997})
			if err != nil {
				if ctx.Err() != nil {
					t.Fatal(err)
				}
				continue // a failover: the next leader takes it (a repeat is archived and mirrored too)
			}
			submitted += perEntry
		}
	}
	failover := func() {
		t.Helper()
		old := testagent.WaitForLeader(t, servers)
		old.Stop(t)
		leader = testagent.WaitForLeader(t, servers)
		t.Logf("failed over from %s to %s after %d events", old.Name, leader.Name, submitted)
		submit(submitted + total/10)
		old.Restart(t)
	}
	submit(total / 3)
	failover()
	submit(2 * total / 3)
	failover()
	submit(total)

	// The leader may change again meanwhile (the restarted server's
	// return can start an election on a loaded machine): whichever server
	// leads mirrors the rest, so ask the current one each time.
	mirrored := testagent.Poll(3*mirrorTimeout, func() bool {
		l := testagent.LeaderOf(servers)
		return l != nil && l.A.Mirror().Mirrored() == lastPosition(t, l.A)
	})
	if !mirrored {
		for _, s := range servers {
			if s.A == nil {
				continue
			}
			st := s.A.Mirror().Status(t.Context())
			t.Logf("%s: leader %v, archive at %+v, mirror running %v, mirrored %d.%d, resumed after %d.%d, lag %d events, last error %q",
				s.Name, s.A.Node().IsLeader(), lastPosition(t, s.A), st.Running, st.MirroredIndex, st.MirroredSeq,
				st.ResumeIndex, st.ResumeSeq, st.LagEvents, st.LastError)
		}
		t.Fatalf("timed out after %v waiting for every event mirrored", 3*mirrorTimeout)
	}
	leader = testagent.WaitForLeader(t, servers)
	mu.Lock()
	t.Logf("%d injected mirror deaths", kills)
	if kills == 0 {
		t.Errorf("no injected mirror death in %d events: the run tested no restart", submitted)
	}
	mu.Unlock()
	rep := verify(t, leader.A)
	t.Logf("topic: %d records in %d partitions, verified in %v", rep.Records, rep.Partitions, rep.Elapsed)
}
