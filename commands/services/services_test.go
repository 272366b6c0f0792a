package services_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/alloc"
	"github.com/ordoplane/ordo/commands/gc"
	"github.com/ordoplane/ordo/commands/node"
	"github.com/ordoplane/ordo/commands/services"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	pt "github.com/ordoplane/ordo/projections/projectionstest"
)

var now = time.Unix(1_700_000_000, 0)

func ids() string { return "id-1" }

// state is a store with nodes n1 and n2 (ready), allocations a1, a2 of
// job web on n1 and b1 on n2, and a completed allocation done1 on n1.
type state struct {
	t     *testing.T
	v     projections.View
	apply func(ps ...events.Payload)
}

func newState(t *testing.T) *state {
	store := pt.OpenStore(t)
	f := pt.NewFSM(t, store)
	var index uint64
	s := &state{t: t, v: projections.NewView(store)}
	s.apply = func(ps ...events.Payload) {
		t.Helper()
		index++
		if res := pt.ApplyOne(t, f, index, pt.Entry(t, "", ps...)); res.Err != nil {
			t.Fatal(res.Err)
		}
	}
	for _, n := range []string{"n1", "n2"} {
		s.apply(&events.NodeRegistered{Node: events.Node{ID: n, Name: n, Datacenter: "dc1", Status: events.NodeStatusReady}})
	}
	a := func(id, n, cs string) events.Allocation {
		return events.Allocation{ID: id, Namespace: "default", JobID: "web", NodeID: n, TaskGroup: "g", Name: "web.g[0]",
			DesiredStatus: events.AllocDesiredRun, ClientStatus: cs}
	}
	s.apply(&events.AllocsPlaced{EvalID: "e1", Allocs: []events.Allocation{a("a1", "n1", events.AllocClientRunning),
		a("a2", "n1", events.AllocClientRunning), a("b1", "n2", events.AllocClientRunning)}})
	done := a("done1", "n1", events.AllocClientComplete)
	done.EvalID = "e2"
	s.apply(&events.EvalsUpserted{Evals: []events.Evaluation{{ID: "e2", Namespace: "default", JobID: "web", Type: "service",
		Priority: 50, TriggeredBy: events.EvalTriggerJobRegister, Status: events.EvalStatusComplete}}},
		&events.AllocsPlaced{EvalID: "e2", Allocs: []events.Allocation{done}})
	return s
}

func sreg(id, name, allocID string) events.ServiceRegistration {
	return events.ServiceRegistration{ID: id, ServiceName: name, Namespace: "default", JobID: "web", AllocID: allocID,
		Address: "10.0.0.1", Port: 8080}
}

func decide(t *testing.T, s *state, c commands.Command) commands.Decision {
	t.Helper()
	if err := c.Validate(); err != nil {
		t.Fatalf("validate: %v", err)
	}
	d, err := c.Decide(s.v, now, ids)
	if err != nil {
		t.Fatalf("decide: %v", err)
	}
	return d
}

func deregistrations(d commands.Decision) []*events.ServicesDeregistered {
	var out []*events.ServicesDeregistered
	for _, p := range d.Events {
		if x, ok := p.(*events.ServicesDeregistered); ok {
			out = append(out, x)
		}
	}
	return out
}

// TestRegisterDecide: a registration is decided with the node's
// datacenter and a precondition on its allocation; a bad one is a
// *commands.ValidationError naming the field; one equal to the stored
// registration decides nothing.
func TestRegisterDecide(t *testing.T) {
	s := newState(t)
	d := decide(t, s, services.Register{NodeID: "n1", Services: []events.ServiceRegistration{sreg("w1", "web", "a1"), sreg("w2", "web", "a2")}})
	if len(d.Events) != 1 || len(d.Preconditions) != 3 {
		t.Fatalf("decision %+v", d)
	}
	r := d.Events[0].(*events.ServicesRegistered)
	if r.Services[0].NodeID != "n1" || r.Services[0].Datacenter != "dc1" {
		t.Fatalf("registration %+v", r.Services[0])
	}
	s.apply(d.Events...)
	if d := decide(t, s, services.Register{NodeID: "n1", Services: []events.ServiceRegistration{sreg("w1", "web", "a1")}}); len(d.Events) != 0 {
		t.Fatalf("an unchanged registration decided %+v", d.Events)
	}
	upd := sreg("w1", "web", "a1")
	upd.Checks = []events.CheckStatus{{Name: "http", Status: events.CheckPassing}}
	if d := decide(t, s, services.Register{NodeID: "n1", Services: []events.ServiceRegistration{upd}}); len(d.Events) != 1 {
		t.Fatalf("a check's change decided %+v", d.Events)
	}
	for _, tc := range []struct {
		name  string
		mut   func(*events.ServiceRegistration)
		field string
	}{
		{"port", func(r *events.ServiceRegistration) { r.Port = -1 }, "Services[0].Port"},
		{"port high", func(r *events.ServiceRegistration) { r.Port = 65536 }, "Services[0].Port"},
		{"address", func(r *events.ServiceRegistration) { r.Address = " " }, "Services[0].Address"},
		{"name", func(r *events.ServiceRegistration) { r.ServiceName = "" }, "Services[0].ServiceName"},
		{"node", func(r *events.ServiceRegistration) { r.NodeID = "n2" }, "Services[0].NodeID"},
		{"check", func(r *events.ServiceRegistration) { r.Checks = []events.CheckStatus{{Status: "ok"}} }, "Services[0].Checks[0].Status"},
		{"other node's alloc", func(r *events.ServiceRegistration) { r.AllocID = "b1" }, "Services[0].AllocID"},
		{"terminal alloc", func(r *events.ServiceRegistration) { r.AllocID = "done1" }, "Services[0].AllocID"},
		{"missing alloc", func(r *events.ServiceRegistration) { r.AllocID = "zz" }, "Services[0].AllocID"},
		{"job", func(r *events.ServiceRegistration) { r.JobID = "api" }, "Services[0].JobID"},
		{"namespace", func(r *events.ServiceRegistration) { r.Namespace = "prod" }, "Services[0].Namespace"},
		{"id of another alloc", func(r *events.ServiceRegistration) { r.AllocID = "a2" }, "Services[0].ID"},
	} {
		r := sreg("w1", "web", "a1")
		tc.mut(&r)
		c := services.Register{NodeID: "n1", Services: []events.ServiceRegistration{r}}
		err := c.Validate()
		if err == nil {
			_, err = c.Decide(s.v, now, ids)
		}
		var ve *commands.ValidationError
		if !errors.As(err, &ve) || ve.Field != tc.field {
			t.Errorf("%s: %v, want a validation error naming %s", tc.name, err, tc.field)
		}
	}
	if _, err := (services.Register{NodeID: "n9", Services: []events.ServiceRegistration{sreg("w9", "web", "a1")}}).Decide(s.v, now, ids); commands.Status(err) != 404 {
		t.Errorf("unknown node: %v", err)
	}
}

// TestDeregisterAndDelete: a client deregisters its own ids (missing ones
// are gone already, another node's are refused); a user deletes one
// instance by name and id.
func TestDeregisterAndDelete(t *testing.T) {
	s := newState(t)
	w1, w2 := sreg("w1", "web", "a1"), sreg("w2", "web", "a2")
	w1.NodeID, w2.NodeID = "n1", "n1"
	s.apply(&events.ServicesRegistered{NodeID: "n1", Services: []events.ServiceRegistration{w1, w2}},
		&events.ServicesRegistered{NodeID: "n2", Services: []events.ServiceRegistration{func() events.ServiceRegistration {
			r := sreg("x1", "web", "b1")
			r.NodeID = "n2"
			return r
		}()}})
	d := decide(t, s, services.Deregister{NodeID: "n1", IDs: []string{"w1", "gone", "w1"}})
	if got := deregistrations(d); len(got) != 1 || !slices.Equal(got[0].IDs, []string{"w1"}) || got[0].Reason != services.ReasonClient {
		t.Fatalf("deregister: %+v", d.Events)
	}
	if d := decide(t, s, services.Deregister{NodeID: "n1", IDs: []string{"gone"}}); len(d.Events) != 0 {
		t.Fatalf("deregistering nothing decided %+v", d.Events)
	}
	var ve *commands.ValidationError
	if _, err := (services.Deregister{NodeID: "n1", IDs: []string{"x1"}}).Decide(s.v, now, ids); !errors.As(err, &ve) || ve.Field != "IDs[0]" {
		t.Fatalf("another node's id: %v", err)
	}
	d = decide(t, s, services.Delete{Namespace: "default", Name: "web", ID: "w2"})
	if got := deregistrations(d); len(got) != 1 || got[0].Reason != services.ReasonUser || len(d.Preconditions) != 1 {
		t.Fatalf("delete: %+v", d)
	}
	for _, c := range []services.Delete{{Namespace: "default", Name: "db", ID: "w2"}, {Namespace: "prod", Name: "web", ID: "w2"},
		{Namespace: "default", Name: "web", ID: "nope"}} {
		if _, err := c.Decide(s.v, now, ids); commands.Status(err) != 404 {
			t.Errorf("%+v: %v, want 404", c, err)
		}
	}
}

// TestCleanupInTheSameEntry: the commands that end an allocation or a
// node append the deregistration of its instances to their own decision,
// with the reason: a client reporting an allocation terminal, a node
// going down after a missed heartbeat or purged, and the garbage
// collection of an allocation.
func TestCleanupInTheSameEntry(t *testing.T) {
	s := newState(t)
	n1 := func(id, a string) events.ServiceRegistration { r := sreg(id, "web", a); r.NodeID = "n1"; return r }
	// done1 holds a registration only through a state no client could
	// reach (placed complete), which is what the GC must clean anyway.
	s.apply(&events.ServicesRegistered{NodeID: "n1", Services: []events.ServiceRegistration{n1("w1", "a1"), n1("d1", "a1"),
		n1("w2", "a2"), n1("z1", "done1")}})

	d := decide(t, s, alloc.ClientUpdate{NodeID: "n1", Allocs: []events.AllocClientUpdate{
		{ID: "a1", ClientStatus: events.AllocClientComplete}, {ID: "a2", ClientStatus: events.AllocClientRunning}}})
	got := deregistrations(d)
	if len(got) != 1 || !slices.Equal(got[0].IDs, []string{"d1", "w1"}) || got[0].Reason != services.ReasonAllocTerminal {
		t.Fatalf("client update: %+v", d.Events)
	}
	if d := decide(t, s, alloc.ClientUpdate{NodeID: "n1", Allocs: []events.AllocClientUpdate{{ID: "a2", ClientStatus: events.AllocClientRunning}}}); len(deregistrations(d)) != 0 {
		t.Fatalf("a running update deregistered: %+v", d.Events)
	}

	d = decide(t, s, node.UpdateStatus{ID: "n1", Status: events.NodeStatusDown, Description: "missed heartbeat", MissedHeartbeat: true})
	got = deregistrations(d)
	if len(got) != 1 || !slices.Equal(got[0].IDs, []string{"d1", "w1", "w2", "z1"}) || got[0].Reason != services.ReasonNodeDown {
		t.Fatalf("node down: %+v", d.Events)
	}
	if d := decide(t, s, node.UpdateStatus{ID: "n2", Status: events.NodeStatusDown, MissedHeartbeat: true}); len(deregistrations(d)) != 0 {
		t.Fatalf("a node without instances: %+v", d.Events)
	}

	d = decide(t, s, node.Deregister{ID: "n1"})
	got = deregistrations(d)
	if len(got) != 1 || !slices.Equal(got[0].IDs, []string{"d1", "w1", "w2", "z1"}) || got[0].Reason != services.ReasonNodePurged {
		t.Fatalf("node purge: %+v", d.Events)
	}

	d = decide(t, s, gc.Collect{Force: true})
	got = deregistrations(d)
	if len(got) != 1 || !slices.Equal(got[0].IDs, []string{"z1"}) || got[0].Reason != services.ReasonAllocDeleted {
		t.Fatalf("gc: %+v", d)
	}
}
