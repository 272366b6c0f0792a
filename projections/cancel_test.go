package projections_test

import (
	"context"
	"errors"
	"math/rand"
	"reflect"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	pt "github.com/ordoplane/ordo/projections/projectionstest"
)

// cancellingProj cancels its Rebuilder's job the first time a rebuild or
// verify applies an event to it once armed.
type cancellingProj struct {
	armed atomic.Bool
	rb    atomic.Pointer[projections.Rebuilder]
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
// are as they were, the shadow and the rebuild markers are gone (a restart
// resumes nothing), and the next job runs.
func TestCancelJob(t *testing.T) {
	c := &cancellingProj{}
	projs := append(allProjs(), c)
	rng := rand.New(rand.NewSource(43))
	store := pt.OpenStore(t)
	f, rb := openFSM(t, store, nil, projs...)
	c.rb.Store(rb)
	applyInBatches(t, rng, f, randomLogs(t, rng, 3000))
	before := pt.Checksums(t, store, projs)

	if _, ok := rb.Cancel(); ok {
		t.Fatal("Cancel with no job reported one")
	}
	for _, kind := range []string{projections.JobRebuild, projections.JobVerify} {
		c.armed.Store(true)
		job, err := rb.Do(t.Context(), kind, nil)
		if !errors.Is(err, projections.ErrJobCancelled) || job.State != projections.JobCancelled || !job.Ended() {
			t.Fatalf("%s cancelled mid-way: %v, %+v", kind, err, job)
		}
		if last, _ := rb.Job(); last.State != projections.JobCancelled {
			t.Errorf("the last job reads %s", last.State)
		}
		if got := pt.Checksums(t, store, projs); !reflect.DeepEqual(got, before) {
			t.Errorf("a cancelled %s changed the live projections", kind)
		}
		if hasPrefix(t, store, "sh/") || hasPrefix(t, store, "rb/") {
			t.Errorf("a cancelled %s left its shadow or markers", kind)
		}
	}

	// Queued, then cancelled before it starts.
	if _, err := rb.Submit(projections.JobRebuild, nil); err != nil {
		t.Fatal(err)
	}
	if j, ok := rb.Cancel(); !ok || j.State != projections.JobQueued {
		t.Fatalf("Cancel of the queued job: %v %+v", ok, j)
	}
	ctx, stop := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		rb.Run(ctx)
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if j, ok := rb.Job(); ok && j.Ended() {
			if j.State != projections.JobCancelled {
				t.Errorf("the queued job ended %s", j.State)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the cancelled queued job never ended")
		}
		runtime.Gosched()
	}
	stop()
	<-done

	job, err := rb.Do(t.Context(), projections.JobRebuild, nil)
	if err != nil || job.State != projections.JobDone {
		t.Fatalf("a rebuild after the cancels: %v %+v", err, job)
	}
	if got := pt.Checksums(t, store, projs); !reflect.DeepEqual(got, before) {
		t.Error("the rebuild after the cancels differs")
	}
}
