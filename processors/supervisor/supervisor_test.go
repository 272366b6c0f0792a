package supervisor

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// probe is a processor that reports starts and stops and can fail on demand.
type probe struct {
	started chan struct{}
	stopped chan struct{}
	fail    atomic.Bool
	runs    atomic.Int32
}

func newProbe() *probe {
	return &probe{started: make(chan struct{}, 16), stopped: make(chan struct{}, 16)}
}

func (p *probe) Name() string { return "probe" }

func (p *probe) Run(ctx context.Context) error {
	p.runs.Add(1)
	signal(p.started)
	defer signal(p.stopped)
	if p.fail.Load() {
		return errors.New("boom")
	}
	<-ctx.Done()
	return ctx.Err()
}

// signal never blocks, so a processor restarting fast cannot wedge itself.
func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

func recv(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(5 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func TestStartsOnLeadershipAndStopsOnLoss(t *testing.T) {
	before := goleak.IgnoreCurrent()
	p := newProbe()
	s, err := New(Config{Logger: quiet()}, p)
	if err != nil {
		t.Fatal(err)
	}
	changes := make(chan bool)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- s.Run(ctx, changes) }()

	changes <- true
	recv(t, p.started, "start on leadership")
	changes <- true // a repeated gain starts nothing new
	changes <- false
	recv(t, p.stopped, "stop on leadership loss")
	if n := p.runs.Load(); n != 1 {
		t.Fatalf("processor ran %d times for one term", n)
	}
	changes <- true
	recv(t, p.started, "start on the next term")
	cancel()
	recv(t, p.stopped, "stop on shutdown")
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	goleak.VerifyNone(t, before)
}

func TestRestartsFailedProcessorWhileLeading(t *testing.T) {
	p := newProbe()
	p.fail.Store(true)
	s, err := New(Config{Logger: quiet(), RestartBackoff: time.Millisecond}, p)
	if err != nil {
		t.Fatal(err)
	}
	changes := make(chan bool, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error)
	go func() { done <- s.Run(ctx, changes) }()
	changes <- true
	recv(t, p.started, "first run")
	recv(t, p.stopped, "first failure")
	recv(t, p.started, "restart after failure")
	p.fail.Store(false)
	cancel()
	<-done
}

func TestRestartRestartsRunningProcessorsOnly(t *testing.T) {
	p := newProbe()
	s, err := New(Config{Logger: quiet()}, p)
	if err != nil {
		t.Fatal(err)
	}
	changes := make(chan bool)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error)
	go func() { done <- s.Run(ctx, changes) }()

	s.Restart() // not leading: nothing runs, nothing starts
	changes <- true
	recv(t, p.started, "start on leadership")
	if n := p.runs.Load(); n != 1 {
		t.Fatalf("a restart asked before leadership started the processor %d times", n)
	}
	s.Restart()
	recv(t, p.stopped, "stop for the restart")
	recv(t, p.started, "start again after the restart")
	if n := p.runs.Load(); n != 2 {
		t.Fatalf("processor ran %d times, want 2 (once, then once after the restart)", n)
	}
	changes <- false
	recv(t, p.stopped, "stop on leadership loss")
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
