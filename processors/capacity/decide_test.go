package capacity

import (
	"slices"
	"testing"
	"time"

	"github.com/ordoplane/ordo/events"
)

func TestDecide(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	pool := Pool{Name: "batch", Label: "small", MaxRequests: 4, IdleTimeout: 10 * time.Minute}
	open := func(id string, idx uint64) Request {
		return Request{ID: id, State: events.RequestRequested, CreateIndex: idx}
	}
	done := func(id string) Request { return Request{ID: id, State: events.RequestFulfilled} }
	for _, tc := range []struct {
		name                      string
		in                        Input
		create                    int
		release, cleanup, return_ []string
		wake                      time.Duration
	}{
		{name: "files what is needed", in: Input{Demand: Demand{Placements: 3}}, create: 3},
		{name: "bounded by max_requests", in: Input{Demand: Demand{Placements: 9}}, create: 4},
		{name: "bound counts fulfilled requests", in: Input{Demand: Demand{Placements: 9},
			Requests: []Request{done("f1"), done("f2"), done("f3")},
			Instances: []Instance{{ID: "i1", RequestID: "f1", Node: &Node{ID: "n1", Allocs: 1}},
				{ID: "i2", RequestID: "f2", Node: &Node{ID: "n2", Allocs: 1}}, {ID: "i3", RequestID: "f3", Node: &Node{ID: "n3", Allocs: 1}}}},
			create: 1},
		{name: "open requests are supply", in: Input{Demand: Demand{Placements: 3}, Requests: []Request{open("r1", 5), open("r2", 6)}}, create: 1},
		{name: "an instance still coming is supply", in: Input{Demand: Demand{Placements: 2}, Requests: []Request{done("f1")},
			Instances: []Instance{{ID: "i1", RequestID: "f1"}}}, create: 1, wake: 10 * time.Minute},
		{name: "an empty node the evals have not tried is supply", in: Input{Demand: Demand{Placements: 1, SeenIndex: 10},
			Requests: []Request{done("f1")}, Instances: []Instance{{ID: "i1", RequestID: "f1", Node: &Node{ID: "n1", ChangeIndex: 11, Usable: true}}}},
			wake: 10 * time.Minute},
		{name: "an empty node the evals tried is not", in: Input{Demand: Demand{Placements: 1, SeenIndex: 12},
			Requests: []Request{done("f1")}, Instances: []Instance{{ID: "i1", RequestID: "f1", Node: &Node{ID: "n1", ChangeIndex: 11, Usable: true}}}},
			create: 1, wake: 10 * time.Minute},
		{name: "release beyond the need, newest first", in: Input{Demand: Demand{Placements: 1},
			Requests: []Request{open("r1", 5), open("r2", 7), open("r3", 6)}}, release: []string{"r2", "r3"}},
		{name: "an open request whose node registered and runs is neither supply nor released", in: Input{Demand: Demand{Placements: 1},
			Requests:  []Request{open("r1", 5), open("r2", 6)},
			Instances: []Instance{{ID: "i1", RequestID: "r1", Node: &Node{ID: "n1", Allocs: 1}}, {ID: "i2", RequestID: "r2"}}}},
		{name: "only requests not launched yet are released", in: Input{Demand: Demand{Placements: 0},
			Requests: []Request{open("r1", 5), open("r2", 6)}, Instances: []Instance{{ID: "i2", RequestID: "r2"}}}, release: []string{"r1"}},
		{name: "an initializing node is supply whatever the evals saw", in: Input{Demand: Demand{Placements: 1, SeenIndex: 20},
			Requests: []Request{done("f1")}, Instances: []Instance{{ID: "i1", RequestID: "f1",
				Node: &Node{ID: "n1", ChangeIndex: 11, Usable: true, Initializing: true}}}}, wake: 10 * time.Minute},
		{name: "an open request's instance still coming is supply once", in: Input{Demand: Demand{Placements: 2},
			Requests: []Request{open("r1", 5)}, Instances: []Instance{{ID: "i1", RequestID: "r1"}}}, create: 1},
		{name: "nothing released while an eval is pending", in: Input{Demand: Demand{Placements: 0, Settling: true},
			Requests: []Request{open("r1", 5)}}},
		{name: "failed requests are deleted and back off", in: Input{Demand: Demand{Placements: 2}, Backoff: time.Minute,
			Requests: []Request{{ID: "x", State: events.RequestFailed}}}, cleanup: []string{"x"}, wake: time.Minute},
		{name: "backoff ends", in: Input{Demand: Demand{Placements: 2}, BackoffUntil: t0}, create: 2},
		{name: "idle past the timeout is returned", in: Input{Requests: []Request{done("f1")},
			Instances: []Instance{{ID: "i1", RequestID: "f1", Node: &Node{ID: "n1"}}},
			IdleSince: map[string]time.Time{"i1": t0.Add(-10 * time.Minute)}}, return_: []string{"i1"}},
		{name: "idle under the timeout waits", in: Input{Requests: []Request{done("f1")},
			Instances: []Instance{{ID: "i1", RequestID: "f1", Node: &Node{ID: "n1"}}},
			IdleSince: map[string]time.Time{"i1": t0.Add(-9 * time.Minute)}}, wake: time.Minute},
		{name: "busy is never idle", in: Input{Requests: []Request{done("f1")},
			Instances: []Instance{{ID: "i1", RequestID: "f1", Node: &Node{ID: "n1", Allocs: 2}}},
			IdleSince: map[string]time.Time{"i1": t0.Add(-time.Hour)}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.in
			in.Pool, in.Now = pool, t0
			d := Decide(in)
			var returned []string
			for _, r := range d.Return {
				returned = append(returned, r.InstanceID)
			}
			if d.Create != tc.create || !slices.Equal(d.Release, tc.release) || !slices.Equal(d.Cleanup, tc.cleanup) ||
				!slices.Equal(returned, tc.return_) || d.Wake != tc.wake {
				t.Fatalf("create %d release %v cleanup %v return %v wake %v; want %d %v %v %v %v",
					d.Create, d.Release, d.Cleanup, returned, d.Wake, tc.create, tc.release, tc.cleanup, tc.return_, tc.wake)
			}
		})
	}
}

func TestCapacityFailure(t *testing.T) {
	for _, tc := range []struct {
		m    *events.AllocMetric
		want bool
	}{
		{&events.AllocMetric{}, true}, // no node in the pool
		{&events.AllocMetric{NodesEvaluated: 3, NodesExhausted: 1, NodesFiltered: 2}, true},
		{&events.AllocMetric{NodesEvaluated: 2, NodesFiltered: 2, ConstraintFiltered: map[string]int{events.ConstraintDistinctHosts: 2}}, true},
		{&events.AllocMetric{NodesEvaluated: 2, NodesFiltered: 2, ConstraintFiltered: map[string]int{"${attr.os} = windows": 2}}, false},
		{nil, false},
	} {
		if got := CapacityFailure(tc.m); got != tc.want {
			t.Errorf("CapacityFailure(%+v) = %v, want %v", tc.m, got, tc.want)
		}
	}
}
