package heartbeat_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ordoplane/ordo/clock/clocktest"
	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/node"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/processors/heartbeat"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/fsm"
	"github.com/ordoplane/ordo/projections/nodes"
	pt "github.com/ordoplane/ordo/projections/projectionstest"
)

// recordingPipeline runs the monitor's commands through a real pipeline
// over an FSM, records the node each was about, and answers with errs in
// turn (without running the command) while it has any.
type recordingPipeline struct {
	p *commands.Pipeline

	mu   sync.Mutex
	cmds []string
	errs []error
}

func (r *recordingPipeline) Run(ctx context.Context, name string, req commands.Request, c commands.Command) (commands.Outcome, error) {
	if name != "node.status" {
		panic("unexpected command " + name)
	}
	id := heartbeat.MissedNode(c)
	if id == "" {
		panic(fmt.Sprintf("unexpected command %T", c))
	}
	r.mu.Lock()
	r.cmds = append(r.cmds, id)
	if len(r.errs) > 0 {
		err := r.errs[0]
		r.errs = r.errs[1:]
		r.mu.Unlock()
		return commands.Outcome{}, err
	}
	r.mu.Unlock()
	return r.p.Run(ctx, name, req, c)
}

// fail makes the next commands fail with errs, one each.
func (r *recordingPipeline) fail(errs ...error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, errs...)
}

// marked returns the ids of the nodes the monitor ran commands about so
// far, sorted.
func (r *recordingPipeline) marked() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := slices.Clone(r.cmds)
	slices.Sort(out)
	return out
}

// state is a store with every projection, written through a real command
// pipeline whose leader clock is the fake clock. Open it outside the
// synctest bubble: only the monitor runs inside.
type state struct {
	t     *testing.T
	fsm   *fsm.FSM
	log   *pt.FSMLog
	clock *clocktest.Clock
	pipe  *recordingPipeline
	n     int
}

func newState(t *testing.T) *state {
	t.Helper()
	store := pt.OpenStore(t)
	st := &state{t: t, fsm: pt.NewFSM(t, store), clock: clocktest.NewClock(time.Unix(1_700_000_000, 0))}
	st.log = &pt.FSMLog{FSM: st.fsm}
	var mu sync.Mutex
	ids := 0
	p, err := commands.NewPipeline(commands.PipelineConfig{Log: st.log, Store: store, Applied: st.fsm.Applied,
		Clock: st.clock, Logger: quiet(), IDs: func() string {
			mu.Lock()
			defer mu.Unlock()
			ids++
			return fmt.Sprintf("id-%04d", ids)
		}})
	if err != nil {
		t.Fatal(err)
	}
	// Closed by the harness, inside the bubble that used it (its wait
	// group belongs to the bubble).
	st.pipe = &recordingPipeline{p: p}
	return st
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// apply appends payloads as one entry at the fake clock's time, as another
// writer (a client, the scheduler) would.
func (st *state) apply(payloads ...events.Payload) {
	st.t.Helper()
	st.n++
	e := pt.Entry(st.t, fmt.Sprintf("setup-%d", st.n), payloads...)
	e.Time = st.clock.Now().UnixNano()
	data, err := events.EncodeEntry(e)
	if err != nil {
		st.t.Fatal(err)
	}
	res, _, _ := st.log.Append(context.Background(), data)
	if r := res.(fsm.Result); r.Err != nil {
		st.t.Fatal(r.Err)
	}
}

// ready registers nodes ids, ready.
func (st *state) ready(ids ...string) {
	st.t.Helper()
	for _, id := range ids {
		st.apply(&events.NodeRegistered{Node: events.Node{ID: id, Name: id, Datacenter: "dc1", Status: events.NodeStatusReady,
			Resources: events.NodeResources{CPU: 4000, MemoryMB: 8192}}})
	}
}

// group is a task group of a test job and how it tolerates disconnects.
type group struct {
	name string
	// lostAfter is the disconnect block's; maxClientDisconnect the older
	// field's; neither set: the group does not tolerate disconnects.
	lostAfter           *time.Duration
	maxClientDisconnect time.Duration
}

// place registers job id with groups and places one allocation of each
// group on node, in that order; terminal lists the groups whose
// allocation is complete.
func (st *state) place(id, node string, groups []group, terminal ...string) {
	st.t.Helper()
	job := events.Job{ID: id, Name: id, Namespace: "default", Type: events.JobTypeService, Priority: 50,
		Datacenters: []string{"dc1"}, NodePool: "default"}
	var placed []events.Allocation
	for i, g := range groups {
		tg := events.TaskGroup{Name: g.name, Count: 1, MaxClientDisconnect: g.maxClientDisconnect,
			Tasks: []events.Task{{Name: "t", Driver: "exec"}}}
		if g.lostAfter != nil {
			tg.Disconnect = &events.Disconnect{LostAfter: *g.lostAfter, Replace: true}
		}
		job.TaskGroups = append(job.TaskGroups, tg)
		a := events.Allocation{ID: fmt.Sprintf("%s-%d", id, i), Namespace: "default", EvalID: "eval-" + id,
			Name: fmt.Sprintf("%s.%s[0]", id, g.name), NodeID: node, JobID: id, TaskGroup: g.name,
			DesiredStatus: events.AllocDesiredRun, ClientStatus: events.AllocClientRunning}
		if slices.Contains(terminal, g.name) {
			a.ClientStatus = events.AllocClientComplete
		}
		placed = append(placed, a)
	}
	st.apply(&events.JobRegistered{Job: job})
	st.apply(&events.AllocsPlaced{EvalID: "eval-" + id, Allocs: placed})
}

// node returns node id as the projection has it.
func (st *state) node(id string) *nodes.Node {
	st.t.Helper()
	snap := st.fsm.Store().Snapshot()
	defer snap.Close()
	n, err := nodes.Get(projections.NewView(snap), id)
	if err != nil {
		st.t.Fatalf("node %s: %v", id, err)
	}
	return n
}

// wantStatus checks the statuses of nodes, given as id, status pairs.
func (st *state) wantStatus(pairs ...string) {
	st.t.Helper()
	for i := 0; i+1 < len(pairs); i += 2 {
		if got := st.node(pairs[i]).Status; got != pairs[i+1] {
			st.t.Fatalf("node %s is %s, want %s", pairs[i], got, pairs[i+1])
		}
	}
}

// statusEvents returns the NodeStatusUpdated events of node id so far.
func (st *state) statusEvents(id string) []*events.NodeStatusUpdated {
	st.t.Helper()
	snap := st.fsm.Store().Snapshot()
	defer snap.Close()
	var out []*events.NodeStatusUpdated
	for _, ev := range pt.Archived(st.t, snap) {
		if ev.Type != "NodeStatusUpdated" {
			continue
		}
		p, err := events.Decode(ev)
		if err != nil {
			st.t.Fatal(err)
		}
		if u := p.(*events.NodeStatusUpdated); u.ID == id {
			out = append(out, u)
		}
	}
	return out
}

type harness struct {
	*state
	mon  *heartbeat.Monitor
	reg  *prometheus.Registry
	stop func()
}

const (
	minTTL   = 10 * time.Second
	grace    = 5 * time.Second
	failover = 2 * time.Minute
)

// start runs a monitor over st tracking initial from the start; call
// inside a synctest bubble.
func start(t *testing.T, st *state, initial []string, tweak func(*heartbeat.Config)) *harness {
	st.t = t // the bubble's
	h := &harness{state: st, reg: prometheus.NewRegistry()}
	cfg := heartbeat.Config{Pipeline: st.pipe, Nodes: func() ([]string, error) { return initial, nil },
		Clock: st.clock, MinTTL: minTTL, MaxHeartbeatsPerSecond: 50, Grace: grace, FailoverTTL: failover,
		Seed: 42, Registerer: h.reg, Logger: quiet()}
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
		st.pipe.p.Close()
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
	st := newState(t)
	st.ready("n1")
	synctest.Test(t, func(t *testing.T) {
		h := start(t, st, nil, nil)
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
		h.wantStatus("n1", events.NodeStatusDown)
		ups := h.statusEvents("n1")
		if len(ups) != 1 || ups[0].Description != "missed heartbeat" || !ups[0].MissedHeartbeat {
			t.Fatalf("status updates %+v", ups)
		}
		if h.node("n1").LastMissedHeartbeatIndex == 0 {
			t.Fatal("no missed heartbeat index recorded")
		}
		if h.mon.Tracked() != 0 || h.metric("ordo_heartbeat_tracked_nodes") != 0 || h.metric("ordo_heartbeat_missed_total") != 1 {
			t.Fatalf("tracked %d, gauge %v, missed %v", h.mon.Tracked(), h.metric("ordo_heartbeat_tracked_nodes"), h.metric("ordo_heartbeat_missed_total"))
		}
	})
}

func TestHeartbeatResetsTTL(t *testing.T) {
	st := newState(t)
	st.ready("n1")
	synctest.Test(t, func(t *testing.T) {
		h := start(t, st, nil, nil)
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
	st := newState(t)
	st.ready("a", "b", "c")
	synctest.Test(t, func(t *testing.T) {
		h := start(t, st, []string{"a", "b", "c"}, nil)
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
		h.wantStatus("a", events.NodeStatusDown, "b", events.NodeStatusDown, "c", events.NodeStatusDown)
	})
}

// nopPipeline is a Submitter for monitors that never run.
type nopPipeline struct{}

func (nopPipeline) Run(context.Context, string, commands.Request, commands.Command) (commands.Outcome, error) {
	panic("unexpected command")
}

func TestTTLScalesWithFleet(t *testing.T) {
	mon, err := heartbeat.New(heartbeat.Config{Pipeline: nopPipeline{}, Nodes: func() ([]string, error) { return nil, nil },
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
		mon, err := heartbeat.New(heartbeat.Config{Pipeline: nopPipeline{}, Nodes: func() ([]string, error) { return nil, nil }, Seed: seed})
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

func ptr[T any](v T) *T { return &v }

func TestDisconnectTolerantAndRetries(t *testing.T) {
	st := newState(t)
	st.ready("tolerant", "plain")
	st.place("edge", "tolerant", []group{{name: "g", lostAfter: ptr(time.Hour)}})
	st.place("web", "plain", []group{{name: "g"}})
	synctest.Test(t, func(t *testing.T) {
		h := start(t, st, []string{"tolerant", "plain"}, nil)
		defer h.stop()
		// The first two decisions go stale; each is decided again.
		h.pipe.fail(&commands.ConflictError{Reason: "modify index moved"}, &commands.ConflictError{Reason: "modify index moved"})
		h.advance(failover)
		if got := h.pipe.marked(); len(got) != 4 || !slices.Contains(got, "plain") || !slices.Contains(got, "tolerant") {
			t.Fatalf("commands about %v", got)
		}
		h.wantStatus("tolerant", events.NodeStatusDisconnected, "plain", events.NodeStatusDown)
		if h.metric("ordo_heartbeat_missed_total") != 2 {
			t.Fatalf("missed counter = %v", h.metric("ordo_heartbeat_missed_total"))
		}
		// The disconnected node is tracked for its window; the down one is not.
		if h.mon.Tracked() != 1 {
			t.Fatalf("tracked %d", h.mon.Tracked())
		}
	})
}

// TestDisconnectedNodeGoesDown: a node that missed its heartbeat while
// running disconnect-tolerant allocations is disconnected; if it has not
// heartbeated by the end of the longest lost_after of its live
// allocations' groups, it is marked down (Nomad's heartbeat timer reset to
// the longest disconnect window).
func TestDisconnectedNodeGoesDown(t *testing.T) {
	st := newState(t)
	st.ready("edge")
	// Windows: 1h (disconnect block), 3h (max_client_disconnect), none
	// (plain), and 10h on a complete allocation, which does not count.
	st.place("svc", "edge", []group{{name: "short", lostAfter: ptr(time.Hour)}, {name: "older", maxClientDisconnect: 3 * time.Hour},
		{name: "plain"}, {name: "done", lostAfter: ptr(10 * time.Hour)}}, "done")
	synctest.Test(t, func(t *testing.T) {
		h := start(t, st, nil, nil)
		defer h.stop()
		ttl := h.mon.Heartbeat("edge")
		synctest.Wait()
		h.advance(ttl + grace)
		h.wantMarked("edge")
		h.wantStatus("edge", events.NodeStatusDisconnected)
		if h.mon.Tracked() != 1 {
			t.Fatalf("a disconnected node is not tracked (%d)", h.mon.Tracked())
		}
		h.advance(3*time.Hour - time.Nanosecond)
		h.wantMarked("edge")
		h.wantStatus("edge", events.NodeStatusDisconnected)
		h.advance(time.Nanosecond)
		h.wantMarked("edge", "edge")
		h.wantStatus("edge", events.NodeStatusDown)
		ups := h.statusEvents("edge")
		if len(ups) != 2 || ups[0].Status != events.NodeStatusDisconnected || ups[1].Status != events.NodeStatusDown ||
			!ups[1].MissedHeartbeat || !strings.Contains(ups[1].Description, "disconnected longer") {
			t.Fatalf("status updates %+v", ups)
		}
		if h.mon.Tracked() != 0 || h.metric("ordo_heartbeat_missed_total") != 2 {
			t.Fatalf("tracked %d, missed %v", h.mon.Tracked(), h.metric("ordo_heartbeat_missed_total"))
		}
	})
}

// TestHeartbeatCancelsDown: a disconnected node that heartbeats within its
// window never goes down at the window's end; if it misses again, it is
// disconnected again with a new window.
func TestHeartbeatCancelsDown(t *testing.T) {
	st := newState(t)
	st.ready("edge")
	st.place("svc", "edge", []group{{name: "g", lostAfter: ptr(time.Hour)}})
	synctest.Test(t, func(t *testing.T) {
		h := start(t, st, []string{"edge"}, nil)
		defer h.stop()
		h.advance(failover)
		h.wantStatus("edge", events.NodeStatusDisconnected)
		h.advance(30 * time.Minute)
		// The client comes back: its status update (initializing until it
		// updates its allocations, N1), then the TTL the API resets.
		if _, err := h.pipe.p.Run(context.Background(), "node.status", commands.Request{Actor: "test"},
			node.UpdateStatus{ID: "edge", Status: events.NodeStatusReady, Description: "heartbeat"}); err != nil {
			t.Fatal(err)
		}
		h.wantStatus("edge", events.NodeStatusInitializing)
		// It keeps heartbeating, every 10s for 40m: past the end of the
		// first window.
		for range 240 {
			h.mon.Heartbeat("edge")
			synctest.Wait()
			h.advance(minTTL)
		}
		h.wantMarked("edge")
		h.wantStatus("edge", events.NodeStatusInitializing)
		// Then it misses one: disconnected again, down an hour later.
		h.advance(2*minTTL + grace)
		h.wantMarked("edge", "edge")
		h.wantStatus("edge", events.NodeStatusDisconnected)
		h.advance(time.Hour - time.Nanosecond)
		h.wantStatus("edge", events.NodeStatusDisconnected)
		h.advance(time.Nanosecond)
		h.wantStatus("edge", events.NodeStatusDown)
	})
}

// TestDisconnectWindowAcrossFailover: a new leader tracks disconnected
// nodes too; when their failover TTL ends, one still within its window
// (counted from when it disconnected) waits out the rest of it, one past
// it goes down.
func TestDisconnectWindowAcrossFailover(t *testing.T) {
	st := newState(t)
	st.ready("young", "old")
	st.place("a", "young", []group{{name: "g", lostAfter: ptr(time.Hour)}})
	st.place("b", "old", []group{{name: "g", lostAfter: ptr(time.Minute)}})
	disconnected := func(id string) events.Payload {
		return &events.NodeStatusUpdated{ID: id, Status: events.NodeStatusDisconnected, Description: "missed heartbeat",
			MissedHeartbeat: true, UpdatedAt: st.clock.Now().UnixNano()}
	}
	st.apply(disconnected("young"), disconnected("old"))
	synctest.Test(t, func(t *testing.T) {
		h := start(t, st, []string{"young", "old"}, nil)
		defer h.stop()
		h.advance(failover)
		h.wantMarked("old", "young")
		h.wantStatus("young", events.NodeStatusDisconnected, "old", events.NodeStatusDown)
		if h.metric("ordo_heartbeat_missed_total") != 1 || h.mon.Tracked() != 1 {
			t.Fatalf("missed %v, tracked %d", h.metric("ordo_heartbeat_missed_total"), h.mon.Tracked())
		}
		h.advance(time.Hour - failover - time.Nanosecond)
		h.wantStatus("young", events.NodeStatusDisconnected)
		h.advance(time.Nanosecond)
		h.wantMarked("old", "young", "young")
		h.wantStatus("young", events.NodeStatusDown)
	})
}

// TestNeverLostStaysDisconnected: an allocation whose group has a
// disconnect block without lost_after is never lost (as the scheduler
// reads it), so its node stays disconnected until it heartbeats.
func TestNeverLostStaysDisconnected(t *testing.T) {
	st := newState(t)
	st.ready("edge")
	st.place("svc", "edge", []group{{name: "g", lostAfter: ptr(time.Hour)}, {name: "forever", lostAfter: ptr(time.Duration(0))}})
	synctest.Test(t, func(t *testing.T) {
		h := start(t, st, []string{"edge"}, nil)
		defer h.stop()
		h.advance(failover)
		h.wantStatus("edge", events.NodeStatusDisconnected)
		if h.mon.Tracked() != 0 {
			t.Fatalf("tracked %d", h.mon.Tracked())
		}
		h.advance(100 * time.Hour)
		h.wantMarked("edge")
		h.wantStatus("edge", events.NodeStatusDisconnected)
	})
}

func TestDeregisteredMeanwhileAndForget(t *testing.T) {
	st := newState(t)
	st.ready("forgotten") // "gone" never registered: the command finds no node
	synctest.Test(t, func(t *testing.T) {
		h := start(t, st, []string{"gone", "forgotten"}, nil)
		defer h.stop()
		h.mon.Forget("forgotten")
		h.advance(failover)
		h.wantMarked("gone")
		if h.mon.Tracked() != 0 || h.metric("ordo_heartbeat_missed_total") != 0 {
			t.Fatalf("tracked %d, missed %v", h.mon.Tracked(), h.metric("ordo_heartbeat_missed_total"))
		}
		h.wantStatus("forgotten", events.NodeStatusReady)
	})
}

func TestFailedMarkIsRetried(t *testing.T) {
	st := newState(t)
	st.ready("n")
	synctest.Test(t, func(t *testing.T) {
		h := start(t, st, []string{"n"}, nil)
		defer h.stop()
		h.pipe.fail(commands.ErrNoLeader)
		h.advance(failover)
		h.wantMarked("n")
		if h.mon.Tracked() != 1 {
			t.Fatal("a node whose mark failed is no longer tracked")
		}
		h.advance(grace)
		h.wantMarked("n", "n")
		h.wantStatus("n", events.NodeStatusDown)
	})
}

func TestStateDroppedWhenStopped(t *testing.T) {
	st := newState(t)
	synctest.Test(t, func(t *testing.T) {
		h := start(t, st, []string{"a"}, nil)
		h.mon.Heartbeat("b")
		synctest.Wait()
		h.stop()
		if h.mon.Tracked() != 0 {
			t.Fatalf("tracked %d after Run stopped", h.mon.Tracked())
		}
	})
}
