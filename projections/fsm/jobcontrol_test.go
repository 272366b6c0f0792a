package fsm_test

import (
	"context"
	"errors"
	"math/rand"
	"os"
	"reflect"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ordoplane/ordo/clock"
	"github.com/ordoplane/ordo/clock/clocktest"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/fsm"
	pt "github.com/ordoplane/ordo/projections/projectionstest"
	"github.com/ordoplane/ordo/storage/waittest"
)

// overlap counts the probe projections applying an event at once, and the
// most that ever did.
type overlap struct{ active, most atomic.Int32 }

// probeProj is a projection that yields in the middle of every Apply, so
// another lane free to run enters its own Apply meanwhile.
type probeProj struct {
	name string
	o    *overlap
}

func (p probeProj) Name() string     { return p.name }
func (p probeProj) Version() int     { return 1 }
func (p probeProj) Tables() []string { return []string{p.name} }

func (p probeProj) Apply(_ *projections.Tx, _ *events.Event) error {
	n := p.o.active.Add(1)
	for m := p.o.most.Load(); n > m && !p.o.most.CompareAndSwap(m, n); m = p.o.most.Load() {
	}
	runtime.Gosched()
	p.o.active.Add(-1)
	return nil
}

// TestRebuildParallelism: while the server applies entries, an operator's
// rebuild or verify replays at most as many projections at once as asked
// (the default leaves the server a core), and says so in its job; while
// it applies nothing, or when asked for all, they overlap.
func TestRebuildParallelism(t *testing.T) {
	o := &overlap{}
	projs := append(allProjs(), probeProj{"probe_a", o}, probeProj{"probe_b", o}, probeProj{"probe_c", o})
	rng := rand.New(rand.NewSource(41))
	store := pt.OpenStore(t)
	f, err := fsm.New(store, fsm.Config{Projections: projs, AllowStale: true, Logger: discard()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	applyInBatches(t, rng, f, randomLogs(t, rng, 1000))

	rb := fsm.NewRebuilder(f, fsm.RebuilderConfig{Logger: discard(), Clock: clock.System{},
		ScratchDir: t.TempDir(), Parallelism: 1, Busy: func() bool { return true }})
	t.Cleanup(rb.Close)
	for _, kind := range []string{fsm.JobRebuild, fsm.JobVerify} {
		o.most.Store(0)
		job, err := rb.Do(t.Context(), kind, nil)
		if err != nil {
			t.Fatal(err)
		}
		if job.Parallelism != 1 {
			t.Errorf("%s job parallelism %d, want 1", kind, job.Parallelism)
		}
		if m := o.most.Load(); m != 1 {
			t.Errorf("%s with parallelism 1: %d probes applied at once", kind, m)
		}
	}

	idle := fsm.NewRebuilder(f, fsm.RebuilderConfig{Logger: discard(), Clock: clock.System{},
		ScratchDir: t.TempDir(), Parallelism: 1, Busy: func() bool { return false }})
	t.Cleanup(idle.Close)
	o.most.Store(0)
	if job, err := idle.Do(t.Context(), fsm.JobRebuild, nil); err != nil || job.Parallelism != 1 {
		t.Fatalf("idle rebuild: %v, parallelism %d", err, job.Parallelism)
	}
	if m := o.most.Load(); m < 2 {
		t.Errorf("with the server idle, at most %d probes applied at once", m)
	}

	all := fsm.NewRebuilder(f, fsm.RebuilderConfig{Logger: discard(), Clock: clock.System{},
		ScratchDir: t.TempDir(), Parallelism: -1, Busy: func() bool { return true }})
	t.Cleanup(all.Close)
	o.most.Store(0)
	job, err := all.Do(t.Context(), fsm.JobRebuild, nil)
	if err != nil {
		t.Fatal(err)
	}
	if job.Parallelism != len(projs) {
		t.Errorf("job parallelism %d, want every projection (%d)", job.Parallelism, len(projs))
	}
	if m := o.most.Load(); m < 2 {
		t.Errorf("with every projection at once, at most %d probes applied at once", m)
	}
	if _, err := all.SubmitParallel(fsm.JobRebuild, nil, -2); !errors.Is(err, fsm.ErrParallelism) {
		t.Errorf("parallelism -2: %v, want ErrParallelism", err)
	}

	// Without a clock to tell an idle server, the limit always holds.
	noClock := fsm.NewRebuilder(f, fsm.RebuilderConfig{Logger: discard(), ScratchDir: t.TempDir(), Parallelism: 1})
	t.Cleanup(noClock.Close)
	o.most.Store(0)
	if _, err := noClock.Do(t.Context(), fsm.JobRebuild, nil); err != nil {
		t.Fatal(err)
	}
	if m := o.most.Load(); m != 1 {
		t.Errorf("with parallelism 1 and no clock: %d probes applied at once", m)
	}
}

// TestRebuildBusy: by default a rebuild counts the server busy once its
// applied index moves, and idle again a second (by the Rebuilder's clock)
// after it last moved.
func TestRebuildBusy(t *testing.T) {
	rng := rand.New(rand.NewSource(47))
	store := pt.OpenStore(t)
	f, err := fsm.New(store, fsm.Config{Projections: allProjs(), Logger: discard()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	logs := randomLogs(t, rng, 20)
	f.Apply(logs[:10])
	clk := clocktest.NewClock(time.Unix(1_700_000_000, 0))
	rb := fsm.NewRebuilder(f, fsm.RebuilderConfig{Logger: discard(), Clock: clk})
	t.Cleanup(rb.Close)
	busy := fsm.BusyFunc(rb)
	if busy() {
		t.Error("busy before anything applied since the job began")
	}
	f.Apply(logs[10:])
	if !busy() {
		t.Error("not busy right after an apply")
	}
	clk.Advance(999 * time.Millisecond)
	if !busy() {
		t.Error("not busy 999 ms after an apply")
	}
	clk.Advance(time.Millisecond)
	if busy() {
		t.Error("still busy a second after the last apply")
	}
}

// cancellingProj cancels its Rebuilder's job the first time a rebuild or
// verify applies an event to it once armed.
type cancellingProj struct {
	armed atomic.Bool
	rb    atomic.Pointer[fsm.Rebuilder]
}

func (*cancellingProj) Name() string     { return "canceller" }
func (*cancellingProj) Version() int     { return 1 }
func (*cancellingProj) Tables() []string { return []string{"canceller"} }

func (p *cancellingProj) Apply(*projections.Tx, *events.Event) error {
	if p.armed.CompareAndSwap(true, false) {
		p.rb.Load().Cancel()
	}
	return nil
}

// TestCancelJob: an operator's cancel ends a running rebuild or verify, or
// a queued one as it starts: the job says cancelled, the live projections
// are as they were, the scratch stores and the rebuild markers are gone (a restart
// resumes nothing), and the next job runs.
func TestCancelJob(t *testing.T) {
	c := &cancellingProj{}
	projs := append(allProjs(), c)
	rng := rand.New(rand.NewSource(43))
	store := pt.OpenStore(t)
	f, rb := openFSM(t, store, nil, projs...)
	c.rb.Store(rb)
	applyInBatches(t, rng, f, randomLogs(t, rng, 400))
	before := pt.Checksums(t, store, projs)

	if _, ok := rb.Cancel(); ok {
		t.Fatal("Cancel with no job reported one")
	}
	for _, kind := range []string{fsm.JobRebuild, fsm.JobVerify} {
		c.armed.Store(true)
		job, err := rb.Do(t.Context(), kind, nil)
		if !errors.Is(err, fsm.ErrJobCancelled) || job.State != fsm.JobCancelled || !job.Ended() {
			t.Fatalf("%s cancelled mid-way: %v, %+v", kind, err, job)
		}
		if last, _ := rb.Job(); last.State != fsm.JobCancelled {
			t.Errorf("the last job reads %s", last.State)
		}
		if got := pt.Checksums(t, store, projs); !reflect.DeepEqual(got, before) {
			t.Errorf("a cancelled %s changed the live projections", kind)
		}
		if hasScratch(t, store.Dir()) || hasPrefix(t, store, "rb/") {
			t.Errorf("a cancelled %s left its scratch store or markers", kind)
		}
		if left, err := os.ReadDir(fsm.ScratchDirOf(rb)); err != nil || len(left) != 0 {
			t.Errorf("a cancelled %s left %v in the verify scratch space (%v)", kind, left, err)
		}
	}

	// Queued, then cancelled before it starts.
	if _, err := rb.Submit(fsm.JobRebuild, nil); err != nil {
		t.Fatal(err)
	}
	if j, ok := rb.Cancel(); !ok || j.State != fsm.JobQueued {
		t.Fatalf("Cancel of the queued job: %v %+v", ok, j)
	}
	ctx, stop := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		rb.Run(ctx)
	}()
	var j fsm.Job
	waittest.For(t, 10*time.Second, "the cancelled queued job to end", func() bool {
		var ok bool
		j, ok = rb.Job()
		return ok && j.Ended()
	})
	if j.State != fsm.JobCancelled {
		t.Errorf("the queued job ended %s", j.State)
	}
	stop()
	<-done

	job, err := rb.Do(t.Context(), fsm.JobRebuild, nil)
	if err != nil || job.State != fsm.JobDone {
		t.Fatalf("a rebuild after the cancels: %v %+v", err, job)
	}
	if got := pt.Checksums(t, store, projs); !reflect.DeepEqual(got, before) {
		t.Error("the rebuild after the cancels differs")
	}
}
