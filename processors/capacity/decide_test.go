package capacity

import (
	"testing"

	"github.com/ordoplane/ordo/events"
)

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
