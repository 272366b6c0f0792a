package services_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/all"
	"github.com/ordoplane/ordo/projections/fsm"
	pt "github.com/ordoplane/ordo/projections/projectionstest"
	"github.com/ordoplane/ordo/projections/services"
)

func reg(id, name, alloc, node string, port int) events.ServiceRegistration {
	return events.ServiceRegistration{ID: id, ServiceName: name, Namespace: "default", NodeID: node, JobID: "web",
		AllocID: alloc, Address: "10.0.0.1", Port: port, Tags: []string{"v1"}}
}

func ids(list []*events.ServiceRegistration, err error) []string {
	if err != nil {
		return []string{"error: " + err.Error()}
	}
	out := []string{}
	for _, s := range list {
		out = append(out, s.ID)
	}
	return out
}

type harness struct {
	t     *testing.T
	f     *fsm.FSM
	v     projections.View
	index uint64
}

func (h *harness) apply(ps ...events.Payload) fsm.Result {
	h.t.Helper()
	h.index++
	return pt.ApplyOne(h.t, h.f, h.index, pt.Entry(h.t, "", ps...))
}

// TestApply: registrations are stored by id with the entry's indexes and
// indexed by name, alloc and node; an identical update writes nothing (the
// table index stays); a real update keeps the create index; deregistration
// and every server-side cleanup (client-terminal, lost, collected
// allocations, a node down) remove rows and their index rows; a rebuild
// computes the same tables.
func TestApply(t *testing.T) {
	store := pt.OpenStore(t)
	h := &harness{t: t, f: pt.NewFSM(t, store), v: projections.NewView(store)}
	v := h.v
	h.apply(&events.ServicesRegistered{NodeID: "n1", Services: []events.ServiceRegistration{
		reg("r1", "web", "a1", "n1", 8080), reg("r2", "web", "a2", "n1", 8081), reg("r3", "db", "a3", "n1", 5432)}})
	h.apply(&events.ServicesRegistered{NodeID: "n2", Services: []events.ServiceRegistration{
		reg("r4", "web", "a4", "n2", 8080)}})
	if got := ids(services.ByName(v, "default", "web")); !reflect.DeepEqual(got, []string{"r1", "r2", "r4"}) {
		t.Fatalf("by name: %v", got)
	}
	if got := ids(services.ByNode(v, "n1")); !reflect.DeepEqual(got, []string{"r1", "r2", "r3"}) {
		t.Fatalf("by node: %v", got)
	}
	if got := ids(services.ByAlloc(v, "a2")); !reflect.DeepEqual(got, []string{"r2"}) {
		t.Fatalf("by alloc: %v", got)
	}
	r1, err := services.Get(v, "r1")
	if err != nil || r1.CreateIndex != 1 || r1.ModifyIndex != 1 || r1.Port != 8080 {
		t.Fatalf("r1 = %+v, %v", r1, err)
	}
	before := pt.TableIndex(t, store, services.Table)
	h.apply(&events.ServicesRegistered{NodeID: "n1", Services: []events.ServiceRegistration{reg("r1", "web", "a1", "n1", 8080)}})
	if got := pt.TableIndex(t, store, services.Table); got != before {
		t.Fatalf("an identical registration moved the table index %d -> %d", before, got)
	}
	up := reg("r1", "web", "a1", "n1", 8080)
	up.Checks = []events.CheckStatus{{Name: "alive", Status: events.CheckPassing}}
	h.apply(&events.ServicesRegistered{NodeID: "n1", Services: []events.ServiceRegistration{up}})
	// A check's output and time alone are no change.
	again := up
	again.Checks = []events.CheckStatus{{Name: "alive", Status: events.CheckPassing, Output: "HTTP 200", Timestamp: 99}}
	h.apply(&events.ServicesRegistered{NodeID: "n1", Services: []events.ServiceRegistration{again}})
	r1, _ = services.Get(v, "r1")
	if r1.CreateIndex != 1 || r1.ModifyIndex != 4 || len(r1.Checks) != 1 {
		t.Fatalf("updated r1 = %+v", r1)
	}
	if ni, _ := services.NameIndex(v, "default", "web"); ni != 4 {
		t.Fatalf("web's name index = %d, want 4", ni)
	}
	// Renamed: the index rows move.
	h.apply(&events.ServicesRegistered{NodeID: "n1", Services: []events.ServiceRegistration{reg("r2", "api", "a2", "n1", 8081)}})
	if got := ids(services.ByName(v, "default", "web")); !reflect.DeepEqual(got, []string{"r1", "r4"}) {
		t.Fatalf("web after rename: %v", got)
	}
	pt.CheckRebuildEqualsLive(t, store, all.Projections()...)

	// Cleanup by the servers, each on its own.
	h.apply(&events.AllocsClientUpdated{NodeID: "n1", Updates: []events.AllocClientUpdate{{ID: "a1", ClientStatus: events.AllocClientRunning}}})
	if _, err := services.Get(v, "r1"); err != nil {
		t.Fatalf("a running alloc lost its registration: %v", err)
	}
	h.apply(&events.AllocsClientUpdated{NodeID: "n1", Updates: []events.AllocClientUpdate{{ID: "a1", ClientStatus: events.AllocClientComplete}}})
	h.apply(&events.AllocsDesiredUpdated{Updates: []events.AllocDesiredUpdate{{ID: "a2", DesiredStatus: events.AllocDesiredStop, ClientStatus: events.AllocClientLost}}})
	if got := ids(services.ByNode(v, "n1")); !reflect.DeepEqual(got, []string{"r3"}) {
		t.Fatalf("n1 after terminal and lost: %v", got)
	}
	h.apply(&events.AllocsDeleted{IDs: []string{"a3"}})
	h.apply(&events.NodeStatusUpdated{ID: "n2", Status: events.NodeStatusDisconnected})
	if got := ids(services.ByNode(v, "n2")); !reflect.DeepEqual(got, []string{"r4"}) {
		t.Fatalf("a disconnected node lost its registrations: %v", got)
	}
	h.apply(&events.NodeStatusUpdated{ID: "n2", Status: events.NodeStatusDown})
	h.apply(&events.ServicesRegistered{NodeID: "n3", Services: []events.ServiceRegistration{reg("r5", "web", "a5", "n3", 1)}})
	h.apply(&events.NodeDeregistered{ID: "n3"})
	var left []string
	if err := services.Scan(v, services.AllNamespaces, func(s *events.ServiceRegistration) error {
		left = append(left, s.ID)
		return nil
	}); err != nil || len(left) != 0 {
		t.Fatalf("left: %v %v", left, err)
	}
	for _, tb := range []string{services.ByNameTable, services.ByAllocTable, services.ByNodeTable} {
		if k := pt.Keys(t, v, tb); len(k) != 0 {
			t.Fatalf("%s keeps %q", tb, k)
		}
	}
	// The name rows stay, so a blocked reader sees the last instance go.
	if ni, _ := services.NameIndex(v, "default", "web"); ni != h.index {
		t.Fatalf("web's name index = %d, want %d", ni, h.index)
	}
	h.apply(&events.ServicesRegistered{NodeID: "n1", Services: []events.ServiceRegistration{reg("r9", "web", "a9", "n1", 1)}})
	h.apply(&events.ServicesDeregistered{IDs: []string{"r9", "missing"}, Reason: "user"})
	if _, err := services.Get(v, "r9"); !errors.Is(err, projections.ErrNotFound) {
		t.Fatalf("deregistered r9: %v", err)
	}
	pt.CheckRebuildEqualsLive(t, store, all.Projections()...)
}

// TestAllocLivePrecondition: a registration is refused at apply once its
// allocation is terminal, collected or on another node.
func TestAllocLivePrecondition(t *testing.T) {
	store := pt.OpenStore(t)
	h := &harness{t: t, f: pt.NewFSM(t, store), v: projections.NewView(store)}
	h.apply(&events.AllocsPlaced{EvalID: "e1", Allocs: []events.Allocation{{ID: "a1", Namespace: "default", JobID: "web",
		NodeID: "n1", TaskGroup: "g", DesiredStatus: events.AllocDesiredRun, ClientStatus: events.AllocClientRunning}}})
	entry := func(node string) *events.Entry {
		e := pt.Entry(t, "", &events.ServicesRegistered{NodeID: node, Services: []events.ServiceRegistration{reg("r1", "web", "a1", node, 80)}})
		e.Preconditions = []events.Precondition{services.AllocLivePrecondition(node, "a1")}
		return e
	}
	h.index++
	if res := pt.ApplyOne(t, h.f, h.index, entry("n1")); res.Err != nil {
		t.Fatal(res.Err)
	}
	h.index++
	var re *fsm.RejectedError
	if res := pt.ApplyOne(t, h.f, h.index, entry("n2")); !errors.As(res.Err, &re) || !strings.Contains(re.Reason, `not on node "n2"`) {
		t.Fatalf("other node: %v", res.Err)
	}
	h.apply(&events.AllocsClientUpdated{NodeID: "n1", Updates: []events.AllocClientUpdate{{ID: "a1", ClientStatus: events.AllocClientFailed}}})
	h.index++
	if res := pt.ApplyOne(t, h.f, h.index, entry("n1")); !errors.As(res.Err, &re) || !strings.Contains(re.Reason, "is failed") {
		t.Fatalf("terminal alloc: %v", res.Err)
	}
	if _, err := services.Get(h.v, "r1"); !errors.Is(err, projections.ErrNotFound) {
		t.Fatalf("registration after the alloc failed: %v", err)
	}
}
