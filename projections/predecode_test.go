package projections_test

import (
	"maps"
	"reflect"
	"slices"
	"testing"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/events/eventstest"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/all"
	pt "github.com/ordoplane/ordo/projections/projectionstest"
)

// TestProjectionsLeavePayloadsAlone: the FSM and rebuilds decode each
// event's payload once and hand the same value to every projection
// (events.Predecode), so no projection may modify it. Every sample
// payload, applied twice over (the second time onto the state the first
// left), is unchanged after every projection applied it.
func TestProjectionsLeavePayloadsAlone(t *testing.T) {
	store := pt.OpenStore(t)
	samples := eventstest.Samples()
	types := slices.Sorted(maps.Keys(samples))
	index := uint64(0)
	for range 2 {
		for _, ty := range types {
			index++
			ev := eventstest.New(t, ty, samples[ty])
			ev.Index = index
			events.Predecode(&ev)
			shared, err := events.Decode(&ev)
			if err != nil {
				t.Fatal(err)
			}
			fresh := eventstest.New(t, ty, samples[ty])
			want, err := events.Decode(&fresh)
			if err != nil {
				t.Fatal(err)
			}
			b := store.Batch()
			for _, p := range all.Projections() {
				if err := projections.ApplyEvent(b, p, &ev, index); err != nil {
					t.Logf("%s on %s: %v", p.Name(), ty, err)
				}
				if !reflect.DeepEqual(shared, want) {
					t.Fatalf("%s modified the %s payload it was handed:\n got %+v\nwant %+v", p.Name(), ty, shared, want)
				}
			}
			if err := b.Commit(); err != nil {
				t.Fatal(err)
			}
		}
	}
}
