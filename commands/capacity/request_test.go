package capacity_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/ordoplane/ordo/commands/capacity"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
)

// A filed request and its link to the evals are one decision: the
// request created with the pool's label and requestor, and
// CapacityRequested naming the same request and the evals (at most
// MaxEvals), keyed by the request and every eval.
func TestFileRequest(t *testing.T) {
	evals := make([]string, capacity.MaxEvals+5)
	for i := range evals {
		evals[i] = fmt.Sprintf("eval-%03d", i)
	}
	c := &capacity.FileRequest{Pool: "batch", Label: "small", Requestor: "capacity:batch", Evals: evals, Placements: 7, Supply: 2}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	d, err := c.Decide(projections.View{}, time.Unix(0, 0), func() string { return "req-1" })
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Events) != 2 {
		t.Fatalf("%d events, want 2", len(d.Events))
	}
	created, ok := d.Events[0].(*events.NodeRequestCreated)
	if !ok || created.Request.ID != "req-1" || created.Request.Requestor != "capacity:batch" || len(created.Request.Labels) != 1 ||
		created.Request.Labels[0] != "small" {
		t.Fatalf("first event %#v, want the request", d.Events[0])
	}
	link, ok := d.Events[1].(*events.CapacityRequested)
	if !ok || link.RequestID != "req-1" || link.Pool != "batch" || len(link.Evals) != capacity.MaxEvals || link.Placements != 7 {
		t.Fatalf("second event %#v, want the link", d.Events[1])
	}
	if keys := link.EntityKeys(); len(keys) != 1+capacity.MaxEvals || keys[1] != (events.Key{Kind: events.KindEval, Value: "eval-000"}) {
		t.Fatalf("keys %v", keys[:2])
	}
	if c.ID() != "req-1" {
		t.Fatalf("ID() = %q", c.ID())
	}
	if err := (&capacity.FileRequest{Label: "small"}).Validate(); err == nil {
		t.Fatal("a request without a pool validated")
	}
}
