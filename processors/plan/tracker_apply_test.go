package plan_test

import (
	"context"
	"testing"
	"time"

	"github.com/ordoplane/ordo/cmd/agent"
	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/node"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/processors/plan"
	"github.com/ordoplane/ordo/processors/schedstate"
	"github.com/ordoplane/ordo/processors/scheduler"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/nodes"
	"github.com/ordoplane/ordo/test/testagent"
)

// changingStates hands the applier the latest state, then changes node
// id's row: the plan is verified against a node that changes before it
// commits, so the commit's node precondition refuses it at apply.
type changingStates struct {
	t   *testing.T
	a   *agent.Agent
	src *schedstate.Source
	id  string
	n   int
}

func (s *changingStates) State() (scheduler.State, func(), error) {
	st, release, err := s.src.State()
	s.n++
	n := events.Node{ID: s.id, Name: s.id, Datacenter: "dc1", NodePool: "default",
		Meta:      map[string]string{"changed": string(rune('a' + s.n))},
		Resources: events.NodeResources{CPU: 1000, MemoryMB: 4096, DiskMB: 1000},
		Drivers:   map[string]events.DriverInfo{"exec": {Detected: true, Healthy: true}}}
	if _, err := s.a.Pipeline().Run(context.Background(), "node.register", commands.Request{}, node.Register{Node: n}); err != nil {
		s.t.Error(err)
	}
	return st, release, err
}

// TestTrackerCountsRejectionsAtApply: rejections found when the commit
// is refused at apply count as those found while verifying do, and a node
// over the threshold is marked ineligible.
func TestTrackerCountsRejectionsAtApply(t *testing.T) {
	a, _ := startApplier(t, 1000, "n1")
	cfg := plan.DefaultTrackerConfig()
	cfg.Enabled, cfg.Threshold, cfg.Window = true, 2, time.Hour
	tracker, err := plan.NewTracker(cfg)
	if err != nil {
		t.Fatal(err)
	}
	states := &changingStates{t: t, a: a, src: &schedstate.Source{Store: a.Store(), Notifier: a.FSM().Notifier()}, id: "n1"}
	ap, err := plan.New(plan.Config{Pipeline: a.Pipeline(), States: states, Tracker: tracker, Logger: testagent.Discard()})
	if err != nil {
		t.Fatal(err)
	}
	testagent.Run(t, "the applier", ap.Run)
	for i, id := range []string{"e1", "e2"} {
		withEvals(t, a, id)
		res, _, err := ap.Submit(context.Background(), onePlacement(id, "n1", 100), nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Placements) != 0 || len(res.RejectedNodes) != 1 || res.RejectedNodes[0] != "n1" {
			t.Fatalf("plan %s: %+v, want refused at apply on n1", id, res)
		}
		if got := tracker.Count("n1", time.Now()); i == 0 && got != 1 {
			t.Fatalf("after one rejection at apply the tracker counts %d", got)
		}
	}
	snap := a.Store().Snapshot()
	defer snap.Close()
	n, err := nodes.Get(projections.NewView(snap), "n1")
	if err != nil || n.SchedulingEligibility != events.NodeIneligible {
		t.Fatalf("n1 after two rejections at apply: %+v, %v; want ineligible", n, err)
	}
}
