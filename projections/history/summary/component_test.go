package summary_test

import (
	"strings"
	"testing"

	"github.com/ordoplane/ordo/events"
)

// A launcher component's timeline: registered with its pools, heartbeats
// that change nothing, a pool added, deregistered.
func TestComponentSummaries(t *testing.T) {
	reg := func(pools ...string) *events.ComponentRegistered {
		c := events.Component{Kind: events.ComponentLauncher, Server: "s1"}
		for _, p := range pools {
			prov, pool, _ := strings.Cut(p, "/")
			c.Pools = append(c.Pools, events.LauncherPool{Provider: prov, Pool: pool, Driver: "sim"})
		}
		return &events.ComponentRegistered{Component: c}
	}
	got := fold(t, events.KindComponent, "launcher/s1", reg("cheap/main"), reg("cheap/main"), reg("cheap/main", "lab/racks"),
		&events.ComponentDeregistered{Kind: events.ComponentLauncher, Server: "s1"})
	want := []string{"registered on s1: 1 pool (cheap/main)", "heartbeat", "pools cheap/main → cheap/main,lab/racks", "deregistered"}
	for i, w := range want {
		if first, _, _ := strings.Cut(got[i], "\n"); first != w {
			t.Errorf("line %d: %q, want %q", i, first, w)
		}
	}
	other := fold(t, events.KindProvider, "cheap", reg("cheap/main"))
	if other[0] != "launcher on s1 runs 1 pool" {
		t.Errorf("from the provider's timeline: %q", other[0])
	}
}
