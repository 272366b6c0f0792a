package heartbeat_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/node"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/processors/heartbeat"
)

// fakeClock is a Clock that moves only when Advance is called.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
}

type fakeTimer struct {
	clock   *fakeClock
	c       chan time.Time
	at      time.Time
	stopped bool
}

func (t *fakeTimer) C() <-chan time.Time { return t.c }
func (t *fakeTimer) Stop() bool {
	t.clock.mu.Lock()
	defer t.clock.mu.Unlock()
	was := !t.stopped
	t.stopped = true
	return was
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Unix(1_700_000_000, 0)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) NewTimer(d time.Duration) heartbeat.Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{clock: c, c: make(chan time.Time, 1), at: c.now.Add(d)}
	if d <= 0 {
		t.c <- c.now
		t.stopped = true
		return t
	}
	c.timers = append(c.timers, t)
	return t
}

// Advance moves the clock by d and fires the timers that are due.
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	kept := c.timers[:0]
	for _, t := range c.timers {
		switch {
		case t.stopped:
		case !t.at.After(c.now):
			t.c <- c.now
			t.stopped = true
		default:
			kept = append(kept, t)
		}
	}
	c.timers = kept
}

// fakePipeline records the commands it is given and answers with errs in turn.
type fakePipeline struct {
	mu   sync.Mutex
	cmds []node.UpdateStatus
	errs []error
}

func (p *fakePipeline) Run(_ context.Context, name string, _ commands.Request, c commands.Command) (commands.Outcome, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if name != "node.status" {
		panic("unexpected command " + name)
	}
	p.cmds = append(p.cmds, c.(node.UpdateStatus))
	if len(p.errs) > 0 {
		err := p.errs[0]
		p.errs = p.errs[1:]
		return commands.Outcome{}, err
	}
	return commands.Outcome{Index: 1}, nil
}

// marked returns the ids of the nodes marked so far, sorted.
func (p *fakePipeline) marked() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for _, c := range p.cmds {
		out = append(out, c.ID)
	}
	slices.Sort(out)
	return out
}

type harness struct {
	t     *testing.T
	clock *fakeClock
	pipe  *fakePipeline
	mon   *heartbeat.Monitor
	reg   *prometheus.Registry
	stop  func()
}

const (
	minTTL   = 10 * time.Second
	grace    = 5 * time.Second
	failover = 2 * time.Minute
)

// start runs a monitor tracking initial from the start; call inside a
// synctest bubble.
func start(t *testing.T, initial []string, tweak func(*heartbeat.Config)) *harness {
	h := &harness{t: t, clock: newFakeClock(), pipe: &fakePipeline{}, reg: prometheus.NewRegistry()}
	cfg := heartbeat.Config{Pipeline: h.pipe, Nodes: func() ([]string, error) { return initial, nil },
		Clock: h.clock, MinTTL: minTTL, MaxHeartbeatsPerSecond: 50, Grace: grace, FailoverTTL: failover,
		Seed: 42, Registerer: h.reg, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if tweak != nil {
		tweak(&cfg)
	}
	mon, err := heartbeat.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h.mon = mon
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- mon.Run(ctx) }()
	h.stop = func() {
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("Run returned %v, want context.Canceled", err)
		}
		mon.Close()
	}
	synctest.Wait()
	return h
}

// metric returns the value of the gauge or counter called name.
func (h *harness) metric(name string) float64 {
	h.t.Helper()
	mfs, err := h.reg.Gather()
	if err != nil {
		h.t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			m := mf.GetMetric()[0]
			return m.GetGauge().GetValue() + m.GetCounter().GetValue()
		}
	}
	h.t.Fatalf("no metric %s", name)
	return 0
}

// advance moves the fake clock and waits until the monitor is idle again.
func (h *harness) advance(d time.Duration) {
	h.clock.Advance(d)
	synctest.Wait()
}

func (h *harness) wantMarked(want ...string) {
	h.t.Helper()
	if got := h.pipe.marked(); !slices.Equal(got, want) {
		h.t.Fatalf("marked %v, want %v", got, want)
	}
}

func TestMissedHeartbeatMarksDown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, nil, nil)
		defer h.stop()
		ttl := h.mon.Heartbeat("n1")
		if ttl < minTTL || ttl >= 2*minTTL {
			t.Fatalf("TTL %v outside [%v, %v)", ttl, minTTL, 2*minTTL)
		}
		synctest.Wait()
		if got := h.metric("ordo_heartbeat_tracked_nodes"); got != 1 {
			t.Fatalf("tracked gauge = %v", got)
		}
		h.advance(ttl + grace - time.Nanosecond)
		h.wantMarked()
		h.advance(time.Nanosecond)
		h.wantMarked("n1")
		want := node.UpdateStatus{ID: "n1", Status: events.NodeStatusDown, Description: "missed heartbeat", MissedHeartbeat: true}
		if got := h.pipe.cmds[0]; got != want {
			t.Fatalf("command = %+v, want %+v", got, want)
		}
		if h.mon.Tracked() != 0 || h.metric("ordo_heartbeat_tracked_nodes") != 0 || h.metric("ordo_heartbeat_missed_total") != 1 {
			t.Fatalf("tracked %d, gauge %v, missed %v", h.mon.Tracked(), h.metric("ordo_heartbeat_tracked_nodes"), h.metric("ordo_heartbeat_missed_total"))
		}
	})
}

func TestHeartbeatResetsTTL(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, nil, nil)
		defer h.stop()
		first := h.mon.Heartbeat("n1")
		synctest.Wait()
		h.advance(first)
		second := h.mon.Heartbeat("n1")
		synctest.Wait()
		// The first deadline passes; the reset one has not.
		h.advance(grace)
		h.wantMarked()
		h.advance(second - time.Nanosecond)
		h.wantMarked()
		h.advance(time.Nanosecond)
		h.wantMarked("n1")
	})
}

func TestGraceAfterLeadership(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, []string{"a", "b", "c"}, nil)
		defer h.stop()
		if h.mon.Tracked() != 3 {
			t.Fatalf("tracked %d nodes at start", h.mon.Tracked())
		}
		// Well past any ordinary TTL, nobody is marked: the fleet has the failover grace.
		h.advance(3 * (minTTL + grace))
		h.wantMarked()
		// b heartbeats the new leader: it is back on an ordinary TTL.
		h.mon.Heartbeat("b")
		synctest.Wait()
		h.advance(failover - 3*(minTTL+grace) - time.Nanosecond)
		h.wantMarked("b")
		h.advance(time.Nanosecond)
		h.wantMarked("a", "b", "c")
	})
}

func TestTTLScalesWithFleet(t *testing.T) {
	mon, err := heartbeat.New(heartbeat.Config{Pipeline: &fakePipeline{}, Nodes: func() ([]string, error) { return nil, nil },
		MinTTL: minTTL, MaxHeartbeatsPerSecond: 50})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		n    int
		want time.Duration
	}{{0, minTTL}, {1, minTTL}, {500, minTTL}, {501, 10020 * time.Millisecond}, {5000, 100 * time.Second}, {50_000, 1000 * time.Second}} {
		if got := mon.TTL(tc.n); got != tc.want {
			t.Errorf("TTL(%d) = %v, want %v", tc.n, got, tc.want)
		}
	}
	// Heartbeats of a large fleet get the scaled TTL plus a jitter below it.
	for i := range 1000 {
		mon.Heartbeat(string(rune('a'+i%26)) + time.Duration(i).String())
	}
	if ttl := mon.Heartbeat("last"); ttl < mon.TTL(1001) || ttl >= 2*mon.TTL(1001) {
		t.Fatalf("TTL of a 1001-node fleet = %v, want in [%v, %v)", ttl, mon.TTL(1001), 2*mon.TTL(1001))
	}
}

func TestJitterIsSeeded(t *testing.T) {
	ttls := func(seed uint64) []time.Duration {
		mon, err := heartbeat.New(heartbeat.Config{Pipeline: &fakePipeline{}, Nodes: func() ([]string, error) { return nil, nil }, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		var out []time.Duration
		for _, id := range []string{"a", "b", "c", "d"} {
			out = append(out, mon.Heartbeat(id))
		}
		return out
	}
	if a, b := ttls(7), ttls(7); !slices.Equal(a, b) {
		t.Fatalf("same seed, different TTLs: %v vs %v", a, b)
	}
	if a, b := ttls(7), ttls(8); slices.Equal(a, b) {
		t.Fatalf("different seeds, same TTLs: %v", a)
	}
}

func TestDisconnectTolerantAndRetries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, []string{"tolerant", "plain"}, func(c *heartbeat.Config) {
			c.DisconnectTolerant = func(id string) bool { return id == "tolerant" }
		})
		defer h.stop()
		// The first decision of each goes stale once; it is decided again.
		h.pipe.errs = []error{&commands.ConflictError{Reason: "modify index moved"}, &commands.ConflictError{Reason: "modify index moved"}}
		h.advance(failover)
		got := map[string]string{}
		for _, c := range h.pipe.cmds {
			got[c.ID] = c.Status
		}
		if len(h.pipe.cmds) != 4 || got["tolerant"] != events.NodeStatusDisconnected || got["plain"] != events.NodeStatusDown {
			t.Fatalf("commands %+v", h.pipe.cmds)
		}
		if h.metric("ordo_heartbeat_missed_total") != 2 {
			t.Fatalf("missed counter = %v", h.metric("ordo_heartbeat_missed_total"))
		}
	})
}

func TestDeregisteredMeanwhileAndForget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, []string{"gone", "forgotten"}, nil)
		defer h.stop()
		h.mon.Forget("forgotten")
		h.pipe.errs = []error{&commands.NotFoundError{Kind: "node", ID: "gone"}}
		h.advance(failover)
		h.wantMarked("gone")
		if h.mon.Tracked() != 0 || h.metric("ordo_heartbeat_missed_total") != 0 {
			t.Fatalf("tracked %d, missed %v", h.mon.Tracked(), h.metric("ordo_heartbeat_missed_total"))
		}
	})
}

func TestFailedMarkIsRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, []string{"n"}, nil)
		defer h.stop()
		h.pipe.errs = []error{commands.ErrNoLeader}
		h.advance(failover)
		h.wantMarked("n")
		if h.mon.Tracked() != 1 {
			t.Fatal("a node whose mark failed is no longer tracked")
		}
		h.advance(grace)
		h.wantMarked("n", "n")
	})
}

func TestStateDroppedWhenStopped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, []string{"a"}, nil)
		h.mon.Heartbeat("b")
		synctest.Wait()
		h.stop()
		if h.mon.Tracked() != 0 {
			t.Fatalf("tracked %d after Run stopped", h.mon.Tracked())
		}
	})
}
