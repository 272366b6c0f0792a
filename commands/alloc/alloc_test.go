package alloc_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/alloc"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/allocs"
	"github.com/ordoplane/ordo/projections/nodes"
	pt "github.com/ordoplane/ordo/projections/projectionstest"
)

func view(t *testing.T) projections.View {
	t.Helper()
	store := pt.OpenStore(t)
	f := pt.NewFSM(t, store)
	a := events.Allocation{ID: "a1", Namespace: "default", EvalID: "e0", NodeID: "n1", JobID: "web", TaskGroup: "web",
		DesiredStatus: events.AllocDesiredRun, ClientStatus: events.AllocClientRunning}
	b := a
	b.ID, b.NodeID = "b1", "n2"
	pt.ApplyOne(t, f, 1, pt.Entry(t, "c1", &events.NodeRegistered{Node: events.Node{ID: "n1", Name: "n1", Datacenter: "dc1"}},
		&events.AllocsPlaced{EvalID: "e0", Allocs: []events.Allocation{a, b}}))
	return projections.NewView(store)
}

func ids() commands.IDs { return func() string { return "eval-new" } }

func TestStop(t *testing.T) {
	v := view(t)
	now := time.Unix(0, pt.LeaderTime)
	dec, err := alloc.Stop{ID: "a1", NoShutdownDelay: true}.Decide(v, now, ids())
	if err != nil {
		t.Fatal(err)
	}
	up := dec.Events[0].(*events.AllocsDesiredUpdated)
	ev := dec.Events[1].(*events.EvalsUpserted).Evals[0]
	if up.EvalID != "eval-new" || up.Updates[0].DesiredStatus != events.AllocDesiredStop || up.Updates[0].DesiredTransition.NoShutdownDelay == nil ||
		!*up.Updates[0].DesiredTransition.NoShutdownDelay {
		t.Fatalf("desired update = %+v", up)
	}
	if ev.ID != "eval-new" || ev.JobID != "web" || ev.TriggeredBy != events.EvalTriggerAllocStop || ev.Status != events.EvalStatusPending || ev.CreateTime != pt.LeaderTime {
		t.Fatalf("eval = %+v", ev)
	}
	if p := dec.Preconditions[0]; p.Table != allocs.Table || p.Key != "a1" || p.Op != events.ModifyIndex || p.Index != 1 {
		t.Fatalf("precondition = %+v", p)
	}
	dec, _ = alloc.Stop{ID: "a1"}.Decide(v, now, ids())
	if dec.Events[0].(*events.AllocsDesiredUpdated).Updates[0].DesiredTransition.NoShutdownDelay != nil {
		t.Fatal("a plain stop set NoShutdownDelay")
	}
	var nf *commands.NotFoundError
	if _, err := (alloc.Stop{ID: "zz"}).Decide(v, now, ids()); !errors.As(err, &nf) {
		t.Fatalf("stop of a missing alloc: %v", err)
	}
	for _, bad := range []string{"", "a b", "a/b", strings.Repeat("x", 129)} {
		if err := (alloc.Stop{ID: bad}).Validate(); err == nil {
			t.Errorf("Validate(%q) passed", bad)
		}
	}
}

func TestClientUpdate(t *testing.T) {
	v := view(t)
	now := time.Unix(0, pt.LeaderTime)
	ok := alloc.ClientUpdate{NodeID: "n1", Allocs: []events.AllocClientUpdate{{ID: "a1", ClientStatus: events.AllocClientComplete}}}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	dec, err := ok.Decide(v, now, ids())
	if err != nil || len(dec.Events) != 2 {
		t.Fatalf("Decide = %+v, %v", dec, err)
	}
	if m, isMarker := dec.Events[1].(*events.NodeAllocsUpdated); !isMarker || m.ID != "n1" {
		t.Fatalf("second event = %#v, want the N1 marker", dec.Events[1])
	}
	if p := dec.Preconditions[0]; p.Table != nodes.Table || p.Op != events.Exists {
		t.Fatalf("precondition = %+v", p)
	}
	for _, tc := range []struct {
		cmd   alloc.ClientUpdate
		field string
	}{
		{alloc.ClientUpdate{NodeID: "n1", Allocs: []events.AllocClientUpdate{{ID: "b1", ClientStatus: "running"}}}, "Allocs[0].ID"},
		{alloc.ClientUpdate{NodeID: "n1", Allocs: []events.AllocClientUpdate{{ID: "a1", ClientStatus: "running"}, {ID: "zz", ClientStatus: "running"}}}, "Allocs[1].ID"},
	} {
		var ve *commands.ValidationError
		if _, err := tc.cmd.Decide(v, now, ids()); !errors.As(err, &ve) || ve.Field != tc.field {
			t.Errorf("Decide(%+v) = %v, want a ValidationError naming %s", tc.cmd, err, tc.field)
		}
	}
	var nf *commands.NotFoundError
	if _, err := (alloc.ClientUpdate{NodeID: "n9"}).Decide(v, now, ids()); !errors.As(err, &nf) {
		t.Fatalf("update from an unknown node: %v", err)
	}
	for _, bad := range []alloc.ClientUpdate{
		{NodeID: ""},
		{NodeID: "n1", Allocs: []events.AllocClientUpdate{{ID: "a1", ClientStatus: events.AllocClientUnknown}}},
		{NodeID: "n1", Allocs: []events.AllocClientUpdate{{ID: "a1", ClientStatus: "running", TaskStates: map[string]*events.TaskState{"t": nil}}}},
		{NodeID: "n1", Allocs: make([]events.AllocClientUpdate, alloc.MaxClientUpdates+1)},
	} {
		if err := bad.Validate(); err == nil {
			t.Errorf("Validate(%+v) passed", bad.Allocs)
		}
	}
}

// The eval a stop creates has its job's priority and type (a system job's
// eval is not a service eval at priority 50).
func TestStopEvalTakesTheJobsPriorityAndType(t *testing.T) {
	store := pt.OpenStore(t)
	f := pt.NewFSM(t, store)
	j := events.Job{ID: "agents", Name: "agents", Namespace: "default", Type: events.JobTypeSystem, Priority: 80,
		TaskGroups: []events.TaskGroup{{Name: "g", Count: 1}}}
	a := events.Allocation{ID: "s1", Namespace: "default", EvalID: "e0", NodeID: "n1", JobID: "agents", TaskGroup: "g",
		DesiredStatus: events.AllocDesiredRun, ClientStatus: events.AllocClientRunning}
	pt.ApplyOne(t, f, 1, pt.Entry(t, "c1", &events.JobRegistered{Job: j}, &events.AllocsPlaced{EvalID: "e0", Allocs: []events.Allocation{a}}))
	dec, err := alloc.Stop{ID: "s1"}.Decide(projections.NewView(store), time.Unix(0, pt.LeaderTime), ids())
	if err != nil {
		t.Fatal(err)
	}
	ev := dec.Events[1].(*events.EvalsUpserted).Evals[0]
	if ev.Priority != 80 || ev.Type != events.JobTypeSystem {
		t.Fatalf("eval priority %d type %s, want the job's 80 and system", ev.Priority, ev.Type)
	}
}
