package scheduler_test

import (
	"strings"
	"testing"

	"github.com/ordoplane/ordo/commands/csi/csitest"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/processors/schedstate"
	"github.com/ordoplane/ordo/processors/scheduler"
	"github.com/ordoplane/ordo/projections"
)

// csiPlan computes an eval of job over the harness's projections, as a
// worker would, and returns the plan.
func csiPlan(t *testing.T, h *csitest.Harness, job string) *scheduler.Plan {
	t.Helper()
	snap := h.Store.Snapshot()
	defer snap.Close()
	st, err := schedstate.New(projections.NewView(snap))
	if err != nil {
		t.Fatal(err)
	}
	ev := &events.Evaluation{ID: "eval-" + job, Namespace: "default", JobID: job, Type: events.JobTypeService,
		TriggeredBy: events.EvalTriggerJobRegister, Status: events.EvalStatusPending, Priority: 50}
	plan, err := scheduler.Compute(st, ev)
	if err != nil || st.Err() != nil {
		t.Fatalf("compute: %v %v", err, st.Err())
	}
	return plan
}

// failure returns the group's failure reasons joined.
func failure(p *scheduler.Plan, group string) string {
	m := p.FailedTGAllocs[group]
	if m == nil {
		return ""
	}
	var out []string
	for r := range m.ConstraintFiltered {
		out = append(out, r)
	}
	return strings.Join(out, " | ")
}

// TestCSIFeasibility: a group asking for a CSI volume is placed only on a
// node whose plugin is healthy, in the volume's topology, in a mode the
// volume supports; per-alloc requests claim one volume per index.
func TestCSIFeasibility(t *testing.T) {
	h := csitest.New(t)
	h.Apply(csitest.PluginNode("n-a", "p1", map[string]string{"zone": "a"}), csitest.PluginNode("n-b", "p2", map[string]string{"zone": "b"}))
	plain := &events.NodeRegistered{Node: csitest.PluginNode("n-none", "", nil).Node}
	plain.Node.CSIControllerPlugins, plain.Node.CSINodePlugins = nil, nil
	h.Apply(plain)
	for _, id := range []string{"n-a", "n-b", "n-none"} {
		h.Apply(&events.NodeStatusUpdated{ID: id, Status: events.NodeStatusReady})
	}
	zoned := csitest.Volume("db", events.CSIAccessSingleNodeWriter)
	zoned.Volume.Topologies = []events.CSITopology{{Segments: map[string]string{"zone": "b"}}}
	h.Apply(zoned, csitest.DBJob("app", "db", events.CSIAccessSingleNodeWriter, false, 1))
	p := csiPlan(t, h, "app")
	if len(p.Placements) != 1 || p.Placements[0].NodeID != "n-b" {
		t.Fatalf("placements %+v, failure %q; want one on n-b (zone b, with the plugin)", p.Placements, failure(p, "db"))
	}

	h.Apply(csitest.DBJob("reader", "db", events.CSIAccessMultiNodeReader, false, 1))
	if p := csiPlan(t, h, "reader"); len(p.Placements) != 0 || !strings.Contains(failure(p, "db"), "does not support access mode") {
		t.Fatalf("unsupported mode: %+v %q", p.Placements, failure(p, "db"))
	}
	h.Apply(csitest.DBJob("ghost", "nope", events.CSIAccessSingleNodeWriter, false, 1))
	if p := csiPlan(t, h, "ghost"); len(p.Placements) != 0 || !strings.Contains(failure(p, "db"), "missing CSI volume nope") {
		t.Fatalf("missing volume: %q", failure(p, "db"))
	}

	h.Apply(csitest.Volume("pa[0]", events.CSIAccessSingleNodeWriter), csitest.Volume("pa[1]", events.CSIAccessSingleNodeWriter),
		csitest.DBJob("per", "pa", events.CSIAccessSingleNodeWriter, true, 3))
	p = csiPlan(t, h, "per")
	if len(p.Placements) != 2 || !strings.Contains(failure(p, "db"), "missing CSI volume pa[2]") {
		t.Fatalf("per-alloc: %d placed, failure %q; want 2 placed and pa[2] missing", len(p.Placements), failure(p, "db"))
	}
}

// TestCSIClaimFailureSaysWhoMustAct (N22): when a single-writer volume's
// claim is held, the failure says whether it clears by itself (the
// holder stopped or was garbage collected: the watcher releases it) or
// needs the user (another job's allocation runs with it); a claim of the
// job's own allocation does not block its placement.
func TestCSIClaimFailureSaysWhoMustAct(t *testing.T) {
	h := csitest.New(t)
	h.Apply(csitest.PluginNode("n1", "p1", nil))
	h.Apply(&events.NodeStatusUpdated{ID: "n1", Status: events.NodeStatusReady})
	h.Apply(csitest.Volume("db", events.CSIAccessSingleNodeWriter), csitest.DBJob("holder", "db", events.CSIAccessSingleNodeWriter, false, 1),
		csitest.DBJob("app", "db", events.CSIAccessSingleNodeWriter, false, 1))
	h.Apply(&events.AllocsPlaced{EvalID: "e0", Allocs: []events.Allocation{csitest.Alloc("holder-1", "holder", "n1", 0)}})

	p := csiPlan(t, h, "app")
	if len(p.Placements) != 0 || !strings.Contains(failure(p, "db"), "held by allocation holder-1 of job holder, which is running: stop it") {
		t.Fatalf("held by a running job: %+v %q", p.Placements, failure(p, "db"))
	}
	// The holder is garbage collected: its claim is being released.
	h.Apply(&events.AllocsDeleted{IDs: []string{"holder-1"}})
	p = csiPlan(t, h, "app")
	if len(p.Placements) != 0 || !strings.Contains(failure(p, "db"), "garbage collected: the claim is being released, no action needed") {
		t.Fatalf("held by a GC'd allocation: %+v %q", p.Placements, failure(p, "db"))
	}
	if !p.EscapedComputedClass {
		t.Errorf("a CSI group's blocked eval must escape computed classes (a freed claim unblocks it)")
	}
	// Freed: the job places.
	h.Apply(&events.CSIVolumeClaimsUpdated{Namespace: "default", VolumeID: "db", Claims: []events.CSIVolumeClaim{{AllocID: "holder-1", State: events.CSIClaimFreed}}})
	if p := csiPlan(t, h, "app"); len(p.Placements) != 1 {
		t.Fatalf("after release: %q", failure(p, "db"))
	}
	// The job's own claim does not block its next version.
	h.Apply(&events.AllocsPlaced{EvalID: "e1", Allocs: []events.Allocation{csitest.Alloc("app-1", "app", "n1", 0)}})
	app := csitest.DBJob("app", "db", events.CSIAccessSingleNodeWriter, false, 2)
	h.Apply(app)
	if p := csiPlan(t, h, "app"); failure(p, "db") != "" && strings.Contains(failure(p, "db"), "app-1") {
		t.Fatalf("own claim blocked: %q", failure(p, "db"))
	}
}
