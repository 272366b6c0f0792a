package node_test

import (
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/commandstest"
	"github.com/ordoplane/ordo/commands/node"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections/allocs"
	"github.com/ordoplane/ordo/projections/fsm"
	"github.com/ordoplane/ordo/projections/nodes"
)

// counter mints ids id-1, id-2, …
func counter() commands.IDs {
	n := 0
	return func() string {
		n++
		return fmt.Sprintf("id-%d", n)
	}
}

func jobOf(id, typ string) *events.JobRegistered {
	return &events.JobRegistered{Job: events.Job{ID: id, Name: id, Namespace: "default", Type: typ, Priority: 60,
		TaskGroups: []events.TaskGroup{{Name: "g", Count: 3, Tasks: []events.Task{{Name: "t", Driver: "exec"}}}}}}
}

func allocOn(id, job, nodeID string) events.Allocation {
	return events.Allocation{ID: id, Namespace: "default", EvalID: "e0", Name: job + ".g[0]", NodeID: nodeID, JobID: job,
		TaskGroup: "g", DesiredStatus: events.AllocDesiredRun, ClientStatus: events.AllocClientRunning}
}

func (c *cluster) alloc(id string) *allocs.Alloc {
	c.T.Helper()
	a, err := allocs.Get(c.View(), id)
	if err != nil {
		c.T.Fatalf("alloc %s: %v", id, err)
	}
	return a
}

// runIDs decides cmd with ids minted by ids and applies it.
func (c *cluster) runIDs(cmd commands.Command, ids commands.IDs) (commands.Decision, fsm.Result) {
	c.T.Helper()
	if err := cmd.Validate(); err != nil {
		c.T.Fatalf("Validate(%+v): %v", cmd, err)
	}
	dec, err := cmd.Decide(c.View(), now, ids)
	if err != nil {
		c.T.Fatalf("Decide(%+v): %v", cmd, err)
	}
	if len(dec.Events) == 0 {
		return dec, fsm.Result{}
	}
	return dec, c.Apply(dec)
}

// TestDrainStartMarksNothing: starting a drain records the strategy and
// makes the node ineligible; its allocations are left to the drainer.
func TestDrainStartMarksNothing(t *testing.T) {
	c := newCluster(t, registered("n", events.NodeStatusReady), jobOf("web", events.JobTypeService),
		jobOf("sys", events.JobTypeSystem),
		&events.AllocsPlaced{EvalID: "e0", Allocs: []events.Allocation{allocOn("a1", "web", "n"), allocOn("s1", "sys", "n")}})
	dec, res := c.run(node.UpdateDrain{ID: "n", Spec: &node.DrainSpec{Deadline: time.Hour}})
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	if len(dec.Events) != 1 {
		t.Fatalf("drain start appended %d events: %#v", len(dec.Events), dec.Events)
	}
	if n := c.node("n"); !n.Drain || n.SchedulingEligibility != events.NodeIneligible ||
		n.DrainStrategy.StartedAt != now.UnixNano() || n.DrainStrategy.ForceDeadline != now.Add(time.Hour).UnixNano() {
		t.Fatalf("draining node = %+v %+v", n, n.DrainStrategy)
	}
	for _, id := range []string{"a1", "s1"} {
		if a := c.alloc(id); a.DesiredTransition.Migrate != nil {
			t.Fatalf("alloc %s marked at drain start", id)
		}
	}

	// Stopping it with MarkEligible re-evaluates the system job (which may
	// place on the node again) and the node's jobs.
	dec, res = c.runIDs(node.UpdateDrain{ID: "n", MarkEligible: true}, counter())
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	if len(dec.Events) != 2 {
		t.Fatalf("drain stop = %#v", dec.Events)
	}
	evs := dec.Events[1].(*events.EvalsUpserted).Evals
	if len(evs) != 2 || evs[0].JobID != "sys" || evs[1].JobID != "web" || evs[0].TriggeredBy != events.EvalTriggerNodeUpdate {
		t.Fatalf("evals = %+v", evs)
	}
	if n := c.node("n"); n.Drain || n.SchedulingEligibility != events.NodeEligible {
		t.Fatalf("stopped drain = %+v", n)
	}
}

func TestMarkMigrate(t *testing.T) {
	c := newCluster(t, registered("n", events.NodeStatusReady), registered("m", events.NodeStatusReady),
		jobOf("web", events.JobTypeService), jobOf("api", events.JobTypeService),
		&events.AllocsPlaced{EvalID: "e0", Allocs: []events.Allocation{
			allocOn("w1", "web", "n"), allocOn("w2", "web", "n"), allocOn("w3", "web", "m"),
			allocOn("x1", "api", "n"), allocOn("done", "api", "n"), allocOn("gone", "ghost", "n")}},
		&events.AllocsClientUpdated{NodeID: "n", Updates: []events.AllocClientUpdate{{ID: "done", ClientStatus: events.AllocClientComplete}}},
		&events.NodeDrainUpdated{ID: "n", DrainStrategy: &events.DrainStrategy{StartedAt: 1}})
	w1, x1 := c.alloc("w1"), c.alloc("x1")
	cmd := node.MarkMigrate{AllocIDs: []string{"x1", "w1", "w3", "done", "missing", "gone", "w1"}}
	dec, err := cmd.Decide(c.View(), now, counter())
	if err != nil {
		t.Fatal(err)
	}
	yes := true
	mark := func(id string) events.AllocDesiredUpdate {
		return events.AllocDesiredUpdate{ID: id, DesiredTransition: events.DesiredTransition{Migrate: &yes}}
	}
	eval := func(id, job string, prio int) events.Evaluation {
		return events.Evaluation{ID: id, Namespace: "default", Priority: prio, Type: events.JobTypeService,
			TriggeredBy: events.EvalTriggerNodeDrain, JobID: job, Status: events.EvalStatusPending,
			CreateTime: now.UnixNano(), ModifyTime: now.UnixNano()}
	}
	want := commands.Decision{
		Events: []events.Payload{
			&events.AllocsDesiredUpdated{EvalID: "id-1", Updates: []events.AllocDesiredUpdate{mark("x1")}},
			&events.AllocsDesiredUpdated{EvalID: "id-2", Updates: []events.AllocDesiredUpdate{mark("gone")}},
			&events.AllocsDesiredUpdated{EvalID: "id-3", Updates: []events.AllocDesiredUpdate{mark("w1")}},
			&events.EvalsUpserted{Evals: []events.Evaluation{eval("id-1", "api", 60), eval("id-2", "ghost", 50), eval("id-3", "web", 60)}},
		},
		Preconditions: []events.Precondition{
			{Table: allocs.Table, Key: "gone", Op: events.ModifyIndex, Index: c.alloc("gone").ModifyIndex},
			{Table: allocs.Table, Key: "w1", Op: events.ModifyIndex, Index: w1.ModifyIndex},
			{Table: allocs.Table, Key: "x1", Op: events.ModifyIndex, Index: x1.ModifyIndex},
		},
	}
	if !reflect.DeepEqual(dec, want) {
		t.Fatalf("Decide =\n %#v\nwant\n %#v", dec, want)
	}

	// A client update in between makes the decision stale: refused.
	c.Apply(commands.Decision{Events: []events.Payload{&events.AllocsClientUpdated{NodeID: "n",
		Updates: []events.AllocClientUpdate{{ID: "w1", ClientStatus: events.AllocClientRunning, ClientDescription: "again"}}}}})
	var re *fsm.RejectedError
	if res := c.Apply(dec); !errors.As(res.Err, &re) {
		t.Fatalf("stale mark applied: %v", res.Err)
	}
	if _, res := c.runIDs(cmd, counter()); res.Err != nil {
		t.Fatal(res.Err)
	}
	for id, marked := range map[string]bool{"w1": true, "x1": true, "w2": false, "w3": false, "done": false} {
		if got := c.alloc(id).DesiredTransition.Migrate != nil; got != marked {
			t.Errorf("alloc %s marked %v, want %v", id, got, marked)
		}
	}
	// Marking again, or on a node that stopped draining, appends nothing.
	if dec, err := cmd.Decide(c.View(), now, counter()); err != nil || len(dec.Events) != 0 {
		t.Fatalf("second mark = %#v, %v", dec, err)
	}
	c.Apply(commands.Decision{Events: []events.Payload{&events.NodeDrainUpdated{ID: "n"}}})
	if dec, err := (node.MarkMigrate{AllocIDs: []string{"w2"}}).Decide(c.View(), now, counter()); err != nil || len(dec.Events) != 0 {
		t.Fatalf("mark on an undrained node = %#v, %v", dec, err)
	}
}

func TestMarkMigrateValidate(t *testing.T) {
	many := make([]string, node.MaxMigrateAllocs+1)
	for i := range many {
		many[i] = fmt.Sprintf("a%d", i)
	}
	for _, cmd := range []node.MarkMigrate{{}, {AllocIDs: []string{""}}, {AllocIDs: []string{"a/b"}}, {AllocIDs: many}} {
		commandstest.WantField(t, cmd.Validate(), "AllocIDs")
	}
	commandstest.WantField(t, node.CompleteDrain{}.Validate(), "ID")
}

// TestCompleteDrain: completing clears the drain and leaves the node
// ineligible; a node changed since the drainer looked is a 409, and a node
// not draining needs nothing.
func TestCompleteDrain(t *testing.T) {
	c := newCluster(t, registered("n", events.NodeStatusReady),
		&events.NodeDrainUpdated{ID: "n", DrainStrategy: &events.DrainStrategy{StartedAt: 1}})
	seen := c.node("n").ModifyIndex
	c.Apply(commands.Decision{Events: []events.Payload{&events.NodeStatusUpdated{ID: "n", Status: events.NodeStatusReady}}})
	dec, err := node.CompleteDrain{ID: "n", ModifyIndex: seen}.Decide(c.View(), now, noIDs)
	if err != nil {
		t.Fatal(err)
	}
	want := commands.Decision{Events: []events.Payload{&events.NodeDrainUpdated{ID: "n"}},
		Preconditions: []events.Precondition{{Table: nodes.Table, Key: "n", Op: events.ModifyIndex, Index: seen}}}
	if !reflect.DeepEqual(dec, want) {
		t.Fatalf("Decide = %#v", dec)
	}
	if res := c.Apply(dec); res.Err == nil {
		t.Fatal("completion decided on a stale node applied")
	}
	if _, res := c.run(node.CompleteDrain{ID: "n", ModifyIndex: c.node("n").ModifyIndex}); res.Err != nil {
		t.Fatal(res.Err)
	}
	if n := c.node("n"); n.Drain || n.DrainStrategy != nil || n.SchedulingEligibility != events.NodeIneligible {
		t.Fatalf("completed drain = %+v", n)
	}
	if dec, _ := c.run(node.CompleteDrain{ID: "n"}); len(dec.Events) != 0 {
		t.Fatalf("completing an undrained node = %#v", dec)
	}
	if _, err := (node.CompleteDrain{ID: "x"}).Decide(c.View(), now, noIDs); commands.Status(err) != 404 {
		t.Fatalf("missing node: %v", err)
	}
}
