package evalfeed_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/eval"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/processors/broker"
	"github.com/ordoplane/ordo/processors/evalfeed"
	"github.com/ordoplane/ordo/projections"
	pt "github.com/ordoplane/ordo/projections/projectionstest"
	"github.com/ordoplane/ordo/storage/waittest"
)

// recorder is a Submitter that records the evals each unblock asks for,
// without appending anything.
type recorder struct {
	mu       sync.Mutex
	unblocks chan []string
}

func (r *recorder) Run(_ context.Context, name string, _ commands.Request, c commands.Command) (commands.Outcome, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if name != "eval.unblock" {
		return commands.Outcome{}, fmt.Errorf("unexpected command %s", name)
	}
	var ids []string
	for _, e := range c.(eval.Update).Evals {
		if e.Status != events.EvalStatusPending {
			return commands.Outcome{}, fmt.Errorf("unblock to %s", e.Status)
		}
		ids = append(ids, e.ID)
	}
	r.unblocks <- ids
	return commands.Outcome{}, nil
}

func node(id, class string) *events.NodeRegistered {
	return &events.NodeRegistered{Node: events.Node{ID: id, Name: id, Datacenter: "dc1", NodeClass: class,
		NodePool: "default", Status: events.NodeStatusReady, Resources: events.NodeResources{CPU: 1000, MemoryMB: 1024}}}
}

func classOf(n *events.NodeRegistered) string {
	return events.ComputedClass(n.Node.Datacenter, n.Node.NodeClass, n.Node.NodePool, n.Node.Attributes, n.Node.Meta, n.Node.Drivers, n.Node.HostVolumes)
}

func blocked(id string, snapshot uint64, escaped bool, elig map[string]bool) events.Evaluation {
	return events.Evaluation{ID: id, Namespace: "default", Priority: 50, Type: events.JobTypeService, JobID: "job-" + id,
		Status: events.EvalStatusBlocked, TriggeredBy: events.EvalTriggerQueuedAllocs, SnapshotIndex: snapshot,
		EscapedComputedClass: escaped, ClassEligibility: elig}
}

// TestUnblockByClass follows the archive with a feed: a capacity change on
// a node unblocks only the blocked evals that may use its computed class,
// and a blocked eval committed after a change it may use, but computed
// before it, is unblocked at once.
func TestUnblockByClass(t *testing.T) {
	store := pt.OpenStore(t)
	fsm := pt.NewFSM(t, store)
	b, err := broker.New(broker.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	rec := &recorder{unblocks: make(chan []string, 10)}
	started := make(chan struct{})
	f, err := evalfeed.New(evalfeed.Config{Broker: b, Pipeline: rec, Store: store, Notifier: fsm.Notifier(),
		Restore: func(projections.View) (pending, blocked []*events.Evaluation, err error) {
			close(started) // the feed follows from after the index it restored at
			return nil, nil, nil
		},
		PollFailed: time.Hour, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	small, big, gpu := node("small-1", "small"), node("big-1", "big"), node("gpu-1", "gpu")
	cs, cb := classOf(small), classOf(big)
	index := uint64(0)
	apply := func(ps ...events.Payload) uint64 {
		index++
		pt.ApplyOne(t, fsm, index, pt.Entry(t, fmt.Sprintf("c%d", index), ps...))
		return index
	}
	at := apply(small, big) // before the feed starts: not capacity changes it acts on

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.Run(ctx) }()
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("the feed did not start")
	}
	next := func(what string) []string {
		t.Helper()
		select {
		case ids := <-rec.unblocks:
			slices.Sort(ids)
			return ids
		case <-time.After(10 * time.Second):
			t.Fatalf("no unblock: %s", what)
			return nil
		}
	}

	apply(&events.EvalsUpserted{Evals: []events.Evaluation{
		blocked("fits-small", at, false, map[string]bool{cs: true, cb: false}),
		blocked("fits-big", at, false, map[string]bool{cs: false, cb: true}),
		blocked("escaped", at, true, map[string]bool{cs: false, cb: false}),
		blocked("knows-none", at, false, nil),
	}})
	// A small node's allocation stops: the small-class and class-blind evals wake.
	apply(&events.AllocsPlaced{EvalID: "e0", Allocs: []events.Allocation{{ID: "a1", Namespace: "default", JobID: "x",
		TaskGroup: "g", NodeID: "small-1", DesiredStatus: events.AllocDesiredRun, ClientStatus: events.AllocClientRunning}}})
	apply(&events.AllocsClientUpdated{NodeID: "small-1", Updates: []events.AllocClientUpdate{{ID: "a1", ClientStatus: events.AllocClientComplete}}})
	if got, want := next("small capacity"), []string{"escaped", "fits-small", "knows-none"}; !slices.Equal(got, want) {
		t.Fatalf("unblocked %v, want %v", got, want)
	}
	// The recorder appended nothing, so all four are still blocked. A new
	// class (no entry in any eval) wakes those that may use it.
	apply(gpu)
	if got, want := next("a new class"), []string{"escaped", "fits-big", "fits-small", "knows-none"}; !slices.Equal(got, want) {
		t.Fatalf("unblocked %v, want %v", got, want)
	}
	// A blocked eval computed before the big node's eligibility came back
	// (but committed after it) is unblocked at once if it fits big only.
	apply(&events.NodeEligibilityUpdated{ID: "big-1", Eligibility: events.NodeIneligible})
	late := apply(&events.NodeEligibilityUpdated{ID: "big-1", Eligibility: events.NodeEligible})
	next("big eligible again") // the four above, again
	apply(&events.EvalsUpserted{Evals: []events.Evaluation{
		blocked("late-big", late-1, false, map[string]bool{cb: true}),
		blocked("late-small", late-1, false, map[string]bool{cb: false, cs: true, classOf(gpu): false}),
	}})
	got := next("a late blocked eval")
	if !slices.Contains(got, "late-big") || slices.Contains(got, "late-small") {
		t.Fatalf("unblocked %v: want late-big and not late-small", got)
	}

	cancel()
	if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
		t.Fatalf("Run = %v", err)
	}
}

// TestDeletedEvalsLeaveBroker: evals the broker holds that are deleted (by
// filter, a page at a time, or by id) are dropped from its queues, so no
// worker is handed an eval that no longer exists; the broker is not paused.
func TestDeletedEvalsLeaveBroker(t *testing.T) {
	store := pt.OpenStore(t)
	fsm := pt.NewFSM(t, store)
	b, err := broker.New(broker.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	started := make(chan struct{})
	f, err := evalfeed.New(evalfeed.Config{Broker: b, Pipeline: &recorder{unblocks: make(chan []string, 10)}, Store: store,
		Notifier: fsm.Notifier(), PollFailed: time.Hour, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Restore: func(projections.View) (pending, blocked []*events.Evaluation, err error) {
			close(started)
			return nil, nil, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.Run(ctx) }()
	defer func() {
		cancel()
		<-done
	}()
	<-started
	index := uint64(0)
	apply := func(ps ...events.Payload) {
		index++
		if res := pt.ApplyOne(t, fsm, index, pt.Entry(t, fmt.Sprintf("c%d", index), ps...)); res.Err != nil {
			t.Fatal(res.Err)
		}
	}
	pending := func(id, job string) events.Evaluation {
		return events.Evaluation{ID: id, Namespace: "default", Priority: 50, Type: events.JobTypeService, JobID: job,
			Status: events.EvalStatusPending, TriggeredBy: events.EvalTriggerJobRegister}
	}
	waitReady := func(want int) {
		t.Helper()
		if !waittest.Poll(10*time.Second, func() bool { return b.Stats().Ready+b.Stats().Waiting == want }) {
			t.Fatalf("broker holds %+v, want %d ready or waiting", b.Stats(), want)
		}
	}
	apply(&events.EvalsUpserted{Evals: []events.Evaluation{pending("a1", "gone-a"), pending("a2", "gone-a"),
		pending("b1", "gone-b"), pending("keep", "other")}})
	waitReady(4)
	// A page by filter deletes a1, a2 and b1 (their jobs are gone: safe).
	apply(&events.EvalsPageDeleted{Filter: `JobID matches "^gone"`, PageSize: 10, ScanLimit: 40})
	waitReady(1)
	ev, tok, err := b.Dequeue(ctx, []string{events.JobTypeService})
	if err != nil || ev.ID != "keep" {
		t.Fatalf("dequeued %v, %v; want keep", ev, err)
	}
	_ = b.Ack(ev.ID, tok)
	// By id.
	apply(&events.EvalsUpserted{Evals: []events.Evaluation{pending("c1", "gone-c")}})
	waitReady(1)
	apply(&events.EvalsDeleted{IDs: []string{"c1"}})
	waitReady(0)
}
