package fsm_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"math/rand"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ordoplane/ordo/clock"
	"github.com/ordoplane/ordo/clock/clocktest"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/fsm"
	"github.com/ordoplane/ordo/projections/namespaces"
	pt "github.com/ordoplane/ordo/projections/projectionstest"
	"github.com/ordoplane/ordo/projections/rebuild"
	"github.com/ordoplane/ordo/projections/servers"
	"github.com/ordoplane/ordo/storage/kv"
	"github.com/ordoplane/ordo/storage/raftlog"
	"github.com/ordoplane/ordo/storage/waittest"
)

func discard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// bumpedProj is p with its stored shape changed: one version up.
type bumpedProj struct{ projections.Projection }

func (b bumpedProj) Version() int { return b.Projection.Version() + 1 }

// extra is a projection added after the store was written.
type extra struct{ servers.Projection }

func (extra) Name() string { return "extra" }

// openFSM returns an FSM over store that accepts stale projections, and its
// Rebuilder.
func openFSM(t *testing.T, store *kv.Store, reg prometheus.Registerer, projs ...projections.Projection) (*fsm.FSM, *fsm.Rebuilder) {
	t.Helper()
	if len(projs) == 0 {
		projs = allProjs()
	}
	f, err := fsm.New(store, fsm.Config{Projections: projs, AllowStale: true, Logger: discard()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	rb := fsm.NewRebuilder(f, fsm.RebuilderConfig{Logger: discard(), Registerer: reg,
		Clock: clock.System{}, ScratchDir: t.TempDir(), CatchUpLag: 1})
	t.Cleanup(rb.Close)
	return f, rb
}

// checkAgainstScratch fails t unless every projection of projs in live has
// the checksum of a from-scratch rebuild of live's archive.
func checkAgainstScratch(t *testing.T, live kv.Reader, projs []projections.Projection) {
	t.Helper()
	dst := pt.OpenStore(t)
	if _, err := rebuild.Rebuild(live, dst, projs, 0, nil); err != nil {
		t.Fatal(err)
	}
	want := pt.Checksums(t, dst, projs)
	for name, sum := range pt.Checksums(t, live, projs) {
		if w := want[name]; sum != w {
			t.Errorf("projection %s: checksum %x, a from-scratch rebuild %x", name, sum[:8], w[:8])
		}
	}
}

// localKeys returns the store's shadow and rebuild-marker keys.
func localKeys(t *testing.T, r kv.Reader) []string {
	t.Helper()
	var out []string
	for _, prefix := range []string{"sh/", "rb/"} {
		err := r.Scan([]byte(prefix), kv.PrefixEnd([]byte(prefix)), false, func(k, _ []byte) error {
			out = append(out, string(k))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// nonProjectionKeys returns every key of r, with its value, outside the
// projection tables of projs and the projection metadata: what a rebuild
// of projs must leave alone.
func nonProjectionKeys(t *testing.T, r kv.Reader, projs []projections.Projection) map[string]string {
	t.Helper()
	skip := [][]byte{[]byte("pm/")}
	for _, p := range projs {
		for _, tb := range p.Tables() {
			skip = append(skip, []byte("t/"+tb+"\x00"), []byte("ti/"+tb))
		}
	}
	out := map[string]string{}
	err := r.Scan(nil, nil, false, func(k, v []byte) error {
		for _, s := range skip {
			if bytes.HasPrefix(k, s) {
				return nil
			}
		}
		out[string(k)] = string(v)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestVersionBumpTriggersRebuild: a store written by one version of a
// projection, opened by a build where its version changed (and where
// another projection is new), has those projections stale: the FSM refuses
// to apply, RebuildStale rebuilds them from the archive, and the result
// equals a from-scratch rebuild and is no longer stale after a reopen.
func TestVersionBumpTriggersRebuild(t *testing.T) {
	dir := t.TempDir()
	store, err := kv.Open(dir, kv.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { store.Close() }()
	rng := rand.New(rand.NewSource(7))
	logs := randomLogs(t, rng, 300)
	f := pt.NewFSM(t, store)
	applyInBatches(t, rng, f, logs)
	f.Close()
	newSet := []projections.Projection{bumpedProj{namespaces.Projection{}}, servers.Projection{}, extra{}}
	reg := prometheus.NewRegistry()
	f2, rb := openFSM(t, store, reg, newSet...)
	// The open records the newer build (compat.go); the rebuild writes
	// nothing else outside its projections.
	before := nonProjectionKeys(t, store, newSet)
	stale := f2.Stale()
	if len(stale) != 2 || stale[0].Projection.Name() != "namespaces" || stale[0].Stored != 2 || stale[1].Projection.Name() != "extra" || stale[1].Stored != 0 {
		t.Fatalf("stale = %v, want namespaces (v2) and extra (missing)", stale)
	}
	if got := gathered(t, reg, "ordo_projection_state", "namespaces", "stale"); got != 1 {
		t.Errorf("state metric for namespaces stale = %v, want 1", got)
	}
	// Applying over a stale projection would mix versions: the FSM stops.
	func() {
		defer func() {
			if recover() == nil {
				t.Error("Apply with stale projections did not stop")
			}
		}()
		f2.Apply([]raftlog.Log{pt.Log(t, uint64(len(logs)+1), pt.Entry(t, "late", upsert("late")))})
	}()

	var phases []string
	fsm.SetRebuildHook(rb, func(p fsm.RebuildProgress) {
		if len(phases) == 0 || phases[len(phases)-1] != p.Phase {
			phases = append(phases, p.Phase)
		}
	})
	if err := rb.RebuildStale(t.Context()); err != nil {
		t.Fatal(err)
	}
	if want := []string{fsm.PhaseBuilding, fsm.PhaseSwitching, fsm.PhaseDone}; strings.Join(phases, ",") != strings.Join(want, ",") {
		t.Errorf("phases %v, want %v", phases, want)
	}
	if len(f2.Stale()) != 0 {
		t.Fatalf("still stale after RebuildStale: %v", f2.Stale())
	}
	checkAgainstScratch(t, store, newSet)
	if keys := localKeys(t, store); len(keys) != 0 {
		t.Errorf("shadow or markers left: %v", keys)
	}
	// Nothing but the projections changed: no event appended, the applied
	// index and every other key as they were (item 7: rebuilds run
	// projections only). The new metadata is expected.
	if after := nonProjectionKeys(t, store, newSet); !reflect.DeepEqual(after, before) {
		t.Errorf("a rebuild changed keys outside the projections it rebuilt: %d keys before, %d after", len(before), len(after))
	}
	if got := gathered(t, reg, "ordo_projection_rebuild_events_total", "namespaces"); got != float64(pt.ArchiveLen(t, store)) {
		t.Errorf("rebuild events metric = %v, want %d", got, pt.ArchiveLen(t, store))
	}
	if got := gathered(t, reg, "ordo_projection_state", "namespaces", "ready"); got != 1 {
		t.Errorf("state metric for namespaces ready = %v, want 1", got)
	}
	// It applies now, and a reopen finds nothing stale.
	pt.ApplyOne(t, f2, uint64(len(logs)+1), pt.Entry(t, "late", upsert("late")))
	f2.Close()
	if _, err := pt.TryNewFSM(store, newSet...); err != nil {
		t.Fatalf("reopen after the rebuild: %v", err)
	}
}

// gathered returns the value of the series of metric name with labels in reg.
func gathered(t *testing.T, reg *prometheus.Registry, name string, labels ...string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			var vals []string
			for _, l := range m.GetLabel() {
				vals = append(vals, l.GetValue())
			}
			if strings.Join(vals, ",") != strings.Join(labels, ",") {
				continue
			}
			if m.GetCounter() != nil {
				return m.GetCounter().GetValue()
			}
			return m.GetGauge().GetValue()
		}
	}
	t.Fatalf("no series %s%v", name, labels)
	return 0
}

// TestOnlineRebuildUnderWrites: an online rebuild of every projection while
// entries keep applying ends identical to a from-scratch rebuild, with
// entries applied during every phase; none is lost or applied twice.
func TestOnlineRebuildUnderWrites(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	store := pt.OpenStore(t)
	f, rb := openFSM(t, store, nil)
	logs := randomLogs(t, rng, 1600)
	applyInBatches(t, rng, f, logs[:800])

	// The writer applies the rest while the rebuild runs, in small
	// batches, pausing so the rebuild sees the head move under it.
	// The writer starts once the rebuild has committed its first batch.
	started := make(chan struct{})
	var once sync.Once
	fsm.SetRebuildHook(rb, func(fsm.RebuildProgress) { once.Do(func() { close(started) }) })
	done := make(chan struct{})
	go func() {
		defer close(done)
		<-started
		wrng := rand.New(rand.NewSource(12))
		rest := logs[800:]
		for len(rest) > 0 {
			n := min(len(rest), 1+wrng.Intn(8))
			f.Apply(rest[:n])
			rest = rest[n:]
		}
	}()
	job, err := rb.Do(t.Context(), fsm.JobRebuild, nil)
	if err != nil {
		t.Fatal(err)
	}
	<-done
	if job.State != fsm.JobDone || job.Events == 0 {
		t.Fatalf("job = %+v", job)
	}
	t.Logf("the rebuild replayed %d events through index %d while the writer applied from index 801", job.Events, job.Index)
	if job.Index <= 800 {
		t.Errorf("the rebuild switched at index %d, before any concurrent write", job.Index)
	}
	if f.Applied() != uint64(len(logs)) {
		t.Fatalf("applied %d, want %d", f.Applied(), len(logs))
	}
	checkAgainstScratch(t, store, allProjs())
	if keys := localKeys(t, store); len(keys) != 0 {
		t.Errorf("shadow or markers left: %v", keys)
	}
}

// TestOnlineRebuildRepairs: a corrupted live projection is found by verify
// and repaired by an online rebuild; readers of a snapshot taken before
// the switch keep seeing the old rows.
func TestOnlineRebuildRepairs(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	store := pt.OpenStore(t)
	f, rb := openFSM(t, store, nil)
	applyInBatches(t, rng, f, randomLogs(t, rng, 300))
	b := store.Batch()
	if err := projections.NewTx(b, 1, 0).Put(namespaces.Table, "zz-corrupt", []byte{0x80}); err != nil { // created and modified at 1
		t.Fatal(err)
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	job, err := rb.Do(t.Context(), fsm.JobVerify, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range job.Results {
		if r.Match != (r.Projection != "namespaces") {
			t.Errorf("verify %s: match %v (live %s, rebuilt %s)", r.Projection, r.Match, r.Live[:8], r.Rebuilt[:8])
		}
	}
	if len(job.Results) != len(allProjs()) {
		t.Errorf("verify compared %d projections, want %d", len(job.Results), len(allProjs()))
	}

	old := store.Snapshot()
	defer old.Close()
	if _, err := rb.Do(t.Context(), fsm.JobRebuild, []string{"namespaces"}); err != nil {
		t.Fatal(err)
	}
	if _, err := projections.NewView(old).Get(namespaces.Table, "zz-corrupt"); err != nil {
		t.Errorf("a snapshot from before the switch lost its row: %v", err)
	}
	if _, err := projections.NewView(store).Get(namespaces.Table, "zz-corrupt"); !errors.Is(err, projections.ErrNotFound) {
		t.Errorf("the corrupt row survived the rebuild: %v", err)
	}
	job, err = rb.Do(t.Context(), fsm.JobVerify, []string{"namespaces", "servers"})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range job.Results {
		if !r.Match {
			t.Errorf("after the rebuild, verify %s does not match", r.Projection)
		}
	}
	st, err := rb.Status(true)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range st {
		if s.State != fsm.StateReady || s.Version != s.StoredVersion || s.Applied != f.Applied() || len(s.Checksum) != 64 {
			t.Errorf("status %+v", s)
		}
	}
	if _, err := rb.Do(t.Context(), fsm.JobRebuild, []string{"nope"}); err == nil {
		t.Error("a rebuild of an unknown projection was accepted")
	}
}

// TestSubmitAndRun: a job submitted while one is queued is refused; Run
// runs the queued one.
func TestSubmitAndRun(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	store := pt.OpenStore(t)
	f, rb := openFSM(t, store, nil)
	applyInBatches(t, rng, f, randomLogs(t, rng, 200))
	if _, err := rb.Submit(fsm.JobRebuild, []string{"servers"}); err != nil {
		t.Fatal(err)
	}
	if _, err := rb.Submit(fsm.JobVerify, nil); !errors.Is(err, fsm.ErrRebuildBusy) {
		t.Fatalf("second submit: %v, want ErrRebuildBusy", err)
	}
	runCtx, stop := context.WithCancel(t.Context())
	ran := make(chan error, 1)
	go func() { ran <- rb.Run(runCtx) }()
	var j fsm.Job
	if !waittest.Poll(20*time.Second, func() bool {
		var ok bool
		j, ok = rb.Job()
		return ok && (j.State == fsm.JobDone || j.State == fsm.JobFailed)
	}) {
		t.Fatalf("job did not finish: %+v", j)
	}
	if j.State == fsm.JobFailed {
		t.Fatalf("job failed: %s", j.Error)
	}
	stop()
	if err := <-ran; err != nil {
		t.Fatal(err)
	}
	checkAgainstScratch(t, store, allProjs())
}

// failing is namespaces whose Apply fails once armed.
type failing struct {
	namespaces.Projection
	armed *bool
}

func (f failing) Apply(tx *projections.Tx, ev *events.Event) error {
	if *f.armed {
		return errors.New("boom")
	}
	return f.Projection.Apply(tx, ev)
}

// TestFailedRebuildLeavesLiveAlone: a rebuild that fails discards its
// shadow and its marker; the live projections serve as they were.
func TestFailedRebuildLeavesLiveAlone(t *testing.T) {
	rng := rand.New(rand.NewSource(9))
	store := pt.OpenStore(t)
	armed := false
	set := []projections.Projection{failing{armed: &armed}, servers.Projection{}}
	f, rb := openFSM(t, store, nil, set...)
	applyInBatches(t, rng, f, randomLogs(t, rng, 300))
	before := pt.Checksums(t, store, set)
	armed = true
	job, err := rb.Do(t.Context(), fsm.JobRebuild, nil)
	if err == nil || job.State != fsm.JobFailed || !strings.Contains(job.Error, "boom") {
		t.Fatalf("job %+v, err %v", job, err)
	}
	if keys := localKeys(t, store); len(keys) != 0 {
		t.Errorf("shadow or markers left: %v", keys)
	}
	if got := pt.Checksums(t, store, set); !reflect.DeepEqual(got, before) {
		t.Error("a failed rebuild changed the live projections")
	}
	st, err := rb.Status(false)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range st {
		if s.State != fsm.StateReady {
			t.Errorf("%s is %s after a failed rebuild", s.Name, s.State)
		}
	}
}

// TestJobReportsSwitchTime: a rebuild job says how long its switch held
// the FSM (from the switching phase to the rebuilt projections serving),
// by the Rebuilder's clock; a verify, which switches nothing, says 0.
func TestJobReportsSwitchTime(t *testing.T) {
	rng := rand.New(rand.NewSource(13))
	store := pt.OpenStore(t)
	f, err := fsm.New(store, fsm.Config{Projections: allProjs(), AllowStale: true, Logger: discard()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	clock := clocktest.NewStepClock(time.Unix(1_700_000_000, 0), time.Second)
	// The clock moves 3 s more as the switch ends (the hook sees each
	// progress before the job does): only the switch's time may hold them.
	rb := fsm.NewRebuilder(f, fsm.RebuilderConfig{Logger: discard(), Clock: clock, ScratchDir: t.TempDir()})
	t.Cleanup(rb.Close)
	fsm.SetRebuildHook(rb, func(p fsm.RebuildProgress) {
		if p.Phase == fsm.PhaseDone {
			clock.Advance(3 * time.Second)
		}
	})
	applyInBatches(t, rng, f, randomLogs(t, rng, 300))

	job, err := rb.Do(t.Context(), fsm.JobRebuild, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Each clock read moves it 1 s: the switch is the 3 s and a read or
	// two, far less than the job (a read per progress report).
	if job.SwitchSeconds < 3 || job.SwitchSeconds > 5 {
		t.Fatalf("switch took %v s by the clock, want the 3 s it moved during it and a read or two (the job took %v)",
			job.SwitchSeconds, job.Finished.Sub(job.Started))
	}
	job, err = rb.Do(t.Context(), fsm.JobVerify, nil)
	if err != nil {
		t.Fatal(err)
	}
	if job.SwitchSeconds != 0 {
		t.Fatalf("a verify reports a switch of %v s", job.SwitchSeconds)
	}
}

// TestSwitchKeepsWritesAfterPrepare: entries applied after the switch's
// table file was written from the shadow (the file holds none of them)
// reach the live projections all the same: the build records the keys it
// writes from then on and the switch copies them over the file's.
func TestSwitchKeepsWritesAfterPrepare(t *testing.T) {
	rng := rand.New(rand.NewSource(17))
	store := pt.OpenStore(t)
	reg := prometheus.NewRegistry()
	f, rb := openFSM(t, store, reg)
	logs := randomLogs(t, rng, 600)
	applyInBatches(t, rng, f, logs[:400])
	var fileAt uint64
	fsm.SetPreparedHook(f, func() {
		fileAt = f.Applied()
		applyInBatches(t, rng, f, logs[400:])
	})
	job, err := rb.Do(t.Context(), fsm.JobRebuild, nil)
	if err != nil {
		t.Fatal(err)
	}
	if fileAt != 400 || job.Index != uint64(len(logs)) {
		t.Fatalf("the file was written at index %d, the switch at %d: want 400 and %d", fileAt, job.Index, len(logs))
	}
	if job.ReadPauseSeconds <= 0 || job.ReadPauseSeconds > job.SwitchSeconds {
		t.Errorf("read pause %v s, switch %v s", job.ReadPauseSeconds, job.SwitchSeconds)
	}
	paused := map[string]float64{}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "ordo_projection_switch_pause_seconds" {
			for _, m := range mf.GetMetric() {
				paused[m.GetLabel()[0].GetValue()] = m.GetGauge().GetValue()
			}
		}
	}
	if paused["writes"] != job.SwitchSeconds || paused["reads"] != job.ReadPauseSeconds {
		t.Errorf("switch pause metric %v, job %+v", paused, job)
	}
	checkAgainstScratch(t, store, allProjs())
	if keys := localKeys(t, store); len(keys) != 0 {
		t.Errorf("shadow or markers left: %v", keys)
	}
}

// TestSwitchHalfReplaced: a switch whose batch fails after the ingest
// leaves the live tables holding the rebuilt rows without what followed
// them: the projections turn stale at once (nothing applies to them, as a
// restart would find them), and rebuilding them restores projections equal
// to a from-scratch rebuild.
func TestSwitchHalfReplaced(t *testing.T) {
	rng := rand.New(rand.NewSource(17))
	store := pt.OpenStore(t)
	f, rb := openFSM(t, store, nil)
	applyInBatches(t, rng, f, randomLogs(t, rng, 300))
	before := pt.Checksums(t, store, allProjs())

	store.SetReplaceHook(func() error { return errors.New("disk gone") })
	job, err := rb.Do(t.Context(), fsm.JobRebuild, nil)
	store.SetReplaceHook(nil)
	if !errors.Is(err, kv.ErrHalfReplaced) || job.State != fsm.JobFailed {
		t.Fatalf("rebuild = %v (%s), want a failed job with ErrHalfReplaced", err, job.State)
	}
	if got, want := len(f.Stale()), len(allProjs()); got != want {
		t.Fatalf("%d projections stale after the half switch, want %d", got, want)
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("an entry applied to stale projections")
			}
		}()
		f.Apply(randomLogs(t, rng, 1)) // whatever the index, Apply refuses
	}()

	if err := rb.RebuildStale(t.Context()); err != nil {
		t.Fatal(err)
	}
	if len(f.Stale()) != 0 {
		t.Fatalf("stale after the rebuild: %v", f.Stale())
	}
	if got := pt.Checksums(t, store, allProjs()); !reflect.DeepEqual(got, before) {
		t.Error("the projections rebuilt after a half switch differ from the ones before it")
	}
	checkAgainstScratch(t, store, allProjs())
}

// TestRebuildMemoryMetric: while an online rebuild holds its row logs (its
// table files written, the switch to come), ordo_projection_rebuild_memory_bytes
// reports the bytes they hold outside Go's heap; once it has switched, it
// holds none.
func TestRebuildMemoryMetric(t *testing.T) {
	rng := rand.New(rand.NewSource(23))
	store := pt.OpenStore(t)
	reg := prometheus.NewRegistry()
	f, rb := openFSM(t, store, reg)
	applyInBatches(t, rng, f, randomLogs(t, rng, 400))
	gauge := func() float64 { return gathered(t, reg, "ordo_projection_rebuild_memory_bytes") }
	// (The process-wide count holds what other tests of this package
	// left allocated, too.)
	before := gauge()
	var during float64
	fsm.SetPreparedHook(f, func() { during = gauge() })
	if _, err := rb.Do(t.Context(), fsm.JobRebuild, nil); err != nil {
		t.Fatal(err)
	}
	if during <= before {
		t.Errorf("during the rebuild: %v bytes, %v before", during, before)
	}
	if g := gauge(); g != before {
		t.Errorf("after the rebuild: %v bytes, %v before", g, before)
	}
}
