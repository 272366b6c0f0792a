package summary_test

import (
	"testing"

	"github.com/ordoplane/ordo/events"
)

// A node request fulfilled by one instance, as the log records it: each
// entity's timeline gets the events keyed to it and shows its own states;
// the request's events on the instance's and the provider's timelines name
// the request and change none of their fields.
func TestLauncherTimelinesShowTheirOwnStates(t *testing.T) {
	life := []events.Payload{
		&events.NodeRequestCreated{Request: events.NodeRequest{ID: "r1", Labels: []string{"small"}, Requestor: "ci"}},
		&events.NodeRequestStateChanged{ID: "r1", State: events.RequestPending, Provider: "sim", Pool: "p1"},
		&events.ProviderPaused{Name: "sim", Paused: true, RequestID: "r1", Reason: "quota"},
		&events.ProviderPaused{Name: "sim", Paused: false},
		&events.InstanceCreated{Instance: events.Instance{ID: "i1", Provider: "sim", Pool: "p1", Label: "small", RequestID: "r1", Requestor: "ci"}},
		&events.InstanceStateChanged{ID: "i1", State: events.InstanceReady, ExternalID: "vm-1"},
		&events.InstanceAssigned{ID: "i1", RequestID: "r1", Requestor: "ci"},
		&events.NodeRequestFulfilled{ID: "r1", Provider: "sim", Instances: []string{"i1"}},
		&events.InstanceStateChanged{ID: "i1", State: events.InstanceInUse},
	}
	for _, tc := range []struct {
		kind, id string
		want     []string
	}{
		{events.KindInstance, "i1", []string{
			"building small on sim/p1 (requestor ci)\n  State: \"\" → \"building\"",
			"state building → ready (external id vm-1)\n  State: \"building\" → \"ready\"",
			"instance i1 assigned to request r1 (requestor ci)",
			"node request r1 fulfilled by sim with i1",
			"state ready → in-use\n  State: \"ready\" → \"in-use\"",
		}},
		{events.KindNodeRequest, "r1", []string{
			"requested small (requestor ci)\n  State: \"\" → \"requested\"",
			"accepted by sim pool p1\n  State: \"requested\" → \"pending\"",
			"provider sim paused for request r1 (quota)",
			"instance i1 (small) building on sim",
			"instance i1 assigned to request r1 (requestor ci)",
			"fulfilled by sim with i1\n  State: \"pending\" → \"fulfilled\"",
		}},
		{events.KindProvider, "sim", []string{
			"node request r1 accepted by sim pool p1",
			"paused for request r1 (quota)\n  Paused: \"\" → \"true\"",
			"unpaused\n  Paused: \"true\" → \"false\"",
			"instance i1 (small) building on sim",
			"node request r1 fulfilled by sim with i1",
		}},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			var mine []events.Payload
			for _, p := range life {
				for _, k := range p.EntityKeys() {
					if k.Kind == tc.kind && k.Value == tc.id {
						mine = append(mine, p)
						break
					}
				}
			}
			got := fold(t, tc.kind, tc.id, mine...)
			if len(got) != len(tc.want) {
				t.Fatalf("%d lines, want %d:\n%q", len(got), len(tc.want), got)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("line %d:\n got %q\nwant %q", i, got[i], tc.want[i])
				}
			}
		})
	}
}
