package projections_test

import (
	"math/rand"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	pt "github.com/ordoplane/ordo/projections/projectionstest"
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

// TestRebuildParallelism: an operator's rebuild or verify replays at most
// as many projections at once as asked (the default leaves the server a
// core), and says so in its job; asking for all lets them overlap.
func TestRebuildParallelism(t *testing.T) {
	o := &overlap{}
	projs := append(allProjs(), probeProj{"probe_a", o}, probeProj{"probe_b", o}, probeProj{"probe_c", o})
	rng := rand.New(rand.NewSource(41))
	store := pt.OpenStore(t)
	f, err := projections.NewFSM(store, projections.FSMConfig{Projections: projs, AllowStale: true, Logger: discard()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	applyInBatches(t, rng, f, randomLogs(t, rng, 3000))

	rb := projections.NewRebuilder(f, projections.RebuilderConfig{Logger: discard(), Clock: time.Now,
		ScratchDir: t.TempDir(), Parallelism: 1})
	t.Cleanup(rb.Close)
	for _, kind := range []string{projections.JobRebuild, projections.JobVerify} {
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

	all := projections.NewRebuilder(f, projections.RebuilderConfig{Logger: discard(), Clock: time.Now,
		ScratchDir: t.TempDir(), Parallelism: -1})
	t.Cleanup(all.Close)
	o.most.Store(0)
	job, err := all.Do(t.Context(), projections.JobRebuild, nil)
	if err != nil {
		t.Fatal(err)
	}
	if job.Parallelism != len(projs) {
		t.Errorf("job parallelism %d, want every projection (%d)", job.Parallelism, len(projs))
	}
	if m := o.most.Load(); m < 2 {
		t.Errorf("with every projection at once, at most %d probes applied at once", m)
	}
	if _, err := all.SubmitParallel(projections.JobRebuild, nil, -2); err == nil {
		t.Error("parallelism -2 accepted")
	}
}
