package client

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/ordoplane/ordo/client/driver"
)

// recorder wraps a driver and keeps every handle it hands out, across
// client processes, so a test can tell from the node's side whether a
// task ever started twice, was stopped, or still runs.
type recorder struct {
	driver.Driver

	mu struct {
		sync.Mutex
		// starts counts Start calls by allocation id; allocOf maps the
		// task ids started to their allocation.
		starts  map[string]int
		allocOf map[string]string
		// handles holds every handle started or recovered, by allocation id.
		handles map[string][]*handle
	}
}

var _ driver.Driver = (*recorder)(nil)

// newRecorder wraps d; when the test ends it kills every task still
// running (those a stopped client process left behind).
func newRecorder(t *testing.T, d driver.Driver) *recorder {
	r := &recorder{Driver: d}
	r.mu.starts = map[string]int{}
	r.mu.allocOf = map[string]string{}
	r.mu.handles = map[string][]*handle{}
	t.Cleanup(func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		for _, hs := range r.mu.handles {
			for _, h := range hs {
				_ = h.Handle.Signal("SIGKILL")
			}
		}
	})
	return r
}

// Start implements driver.Driver.
func (r *recorder) Start(ctx context.Context, cfg driver.TaskConfig) (driver.Handle, error) {
	r.mu.Lock()
	r.mu.starts[cfg.AllocID]++
	r.mu.allocOf[cfg.ID] = cfg.AllocID
	r.mu.Unlock()
	h, err := r.Driver.Start(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return r.keep(cfg.AllocID, h, false), nil
}

// Recover implements driver.Driver.
func (r *recorder) Recover(ctx context.Context, s driver.HandleState) (driver.Handle, error) {
	h, err := r.Driver.Recover(ctx, s)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	alloc := r.mu.allocOf[s.TaskID]
	r.mu.Unlock()
	return r.keep(alloc, h, true), nil
}

func (r *recorder) keep(alloc string, h driver.Handle, recovered bool) *handle {
	w := &handle{Handle: h, recovered: recovered}
	r.mu.Lock()
	r.mu.handles[alloc] = append(r.mu.handles[alloc], w)
	r.mu.Unlock()
	return w
}

// starts returns how often the tasks of alloc were started.
func (r *recorder) starts(alloc string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.mu.starts[alloc]
}

// handles returns the handles of alloc's tasks, started and recovered.
func (r *recorder) handles(alloc string) []*handle {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*handle(nil), r.mu.handles[alloc]...)
}

// handle is a task's handle that counts the stops asked of it.
type handle struct {
	driver.Handle
	recovered bool
	stops     atomic.Int32
}

// Stop implements driver.Handle.
func (h *handle) Stop(ctx context.Context) error {
	h.stops.Add(1)
	return h.Handle.Stop(ctx)
}

// running reports whether the task has not exited.
func (h *handle) running() bool {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := h.Handle.Wait(ctx)
	return err != nil
}
