package evalfeed

import (
	"testing"

	"github.com/ordoplane/ordo/events"
)

func TestUnblocks(t *testing.T) {
	elig := map[string]bool{"v1:a": true, "v1:b": false}
	for _, tc := range []struct {
		name    string
		escaped bool
		elig    map[string]bool
		class   string
		want    bool
	}{
		{"eligible class", false, elig, "v1:a", true},
		{"ineligible class", false, elig, "v1:b", false},
		{"unknown class might fit", false, elig, "v1:c", true},
		{"no eligibility recorded", false, nil, "v1:b", true},
		{"escaped: ineligible class too", true, elig, "v1:b", true},
		{"escaped: eligible class", true, elig, "v1:a", true},
	} {
		e := &events.Evaluation{ID: "e", EscapedComputedClass: tc.escaped, ClassEligibility: tc.elig}
		if got := unblocks(e, tc.class); got != tc.want {
			t.Errorf("%s: unblocks = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestMissed(t *testing.T) {
	e := &events.Evaluation{ID: "e", SnapshotIndex: 10, ClassEligibility: map[string]bool{"v1:a": true, "v1:b": false}}
	for _, tc := range []struct {
		name    string
		changes map[string]uint64
		want    bool
	}{
		{"nothing changed", nil, false},
		{"an eligible class changed before the snapshot", map[string]uint64{"v1:a": 9}, false},
		{"at the snapshot", map[string]uint64{"v1:a": 10}, false},
		{"after it", map[string]uint64{"v1:a": 11}, true},
		{"an ineligible class changed after it", map[string]uint64{"v1:b": 50}, false},
		{"an unknown class changed after it", map[string]uint64{"v1:b": 50, "v1:z": 11}, true},
	} {
		if got := missed(e, tc.changes); got != tc.want {
			t.Errorf("%s: missed = %v, want %v", tc.name, got, tc.want)
		}
	}
}
