package scaling_test

import (
	"fmt"
	"testing"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	pt "github.com/ordoplane/ordo/projections/projectionstest"
	"github.com/ordoplane/ordo/projections/scaling"
)

// TestEvents: each group keeps its last MaxEvents events, newest first,
// each with the index that recorded it; stopping a job keeps them and
// purging it drops them.
func TestEvents(t *testing.T) {
	store := pt.OpenStore(t)
	f := pt.NewFSM(t, store)
	v := projections.NewView(store)
	index := uint64(0)
	scaled := func(group string, n int64) {
		index++
		pt.ApplyOne(t, f, index, pt.Entry(t, fmt.Sprint("c", index), &events.JobScaled{Namespace: "default", JobID: "web",
			Group: group, Event: events.ScalingEvent{Count: &n, Message: fmt.Sprint("to ", n), Time: int64(index)}}))
	}
	for n := range int64(scaling.MaxEvents + 2) {
		scaled("a", n)
	}
	scaled("b", 7)
	evs, err := scaling.Events(v, "default", "web")
	if err != nil {
		t.Fatal(err)
	}
	a := evs["a"]
	if len(a) != scaling.MaxEvents || *a[0].Count != scaling.MaxEvents+1 || a[0].CreateIndex != scaling.MaxEvents+2 ||
		*a[len(a)-1].Count != 2 {
		t.Fatalf("group a: %d events, newest %+v, oldest %+v", len(a), a[0], a[len(a)-1])
	}
	if b := evs["b"]; len(b) != 1 || *b[0].Count != 7 || b[0].CreateIndex != index {
		t.Fatalf("group b: %+v", b)
	}
	if other, err := scaling.Events(v, "default", "api"); err != nil || len(other) != 0 {
		t.Fatalf("a job without events: %+v, %v", other, err)
	}

	index++
	pt.ApplyOne(t, f, index, pt.Entry(t, "stop", &events.JobDeregistered{Namespace: "default", ID: "web"}))
	if evs, _ := scaling.Events(v, "default", "web"); len(evs) != 2 {
		t.Fatalf("after a stop: %d groups, want both kept", len(evs))
	}
	index++
	pt.ApplyOne(t, f, index, pt.Entry(t, "purge", &events.JobDeregistered{Namespace: "default", ID: "web", Purge: true}))
	if evs, _ := scaling.Events(v, "default", "web"); len(evs) != 0 {
		t.Fatalf("after a purge: %+v", evs)
	}
}
