package servers_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	pt "github.com/ordoplane/ordo/projections/projectionstest"
	"github.com/ordoplane/ordo/projections/servers"
)

func TestProjection(t *testing.T) {
	store := pt.OpenStore(t)
	f := pt.NewFSM(t, store)
	v := projections.NewView(store)
	s1 := &events.ServerRegistered{ID: "s1", RaftAddr: "10.0.0.1:4647", HTTPAddr: "10.0.0.1:4646"}
	s2 := &events.ServerRegistered{ID: "s2", RaftAddr: "10.0.0.2:4647", HTTPAddr: "10.0.0.2:4646"}
	pt.ApplyOne(t, f, 1, pt.Entry(t, "c1", s2, s1))

	got, err := servers.Get(v, "s1")
	if err != nil || !reflect.DeepEqual(got, s1) {
		t.Fatalf("Get(s1) = %+v, %v", got, err)
	}
	list, err := servers.List(v)
	if err != nil || !reflect.DeepEqual(list, []*servers.Server{s1, s2}) {
		t.Fatalf("List = %+v, %v; want s1, s2 by id", list, err)
	}

	// Re-registering moves a server's addresses.
	moved := &events.ServerRegistered{ID: "s1", RaftAddr: "10.0.0.9:4647", HTTPAddr: "10.0.0.9:4646"}
	pt.ApplyOne(t, f, 2, pt.Entry(t, "c2", moved))
	if got, _ := servers.Get(v, "s1"); !reflect.DeepEqual(got, moved) {
		t.Fatalf("after re-registering: %+v", got)
	}

	pt.ApplyOne(t, f, 3, pt.Entry(t, "c3", &events.ServerRemoved{ID: "s1"}))
	if _, err := servers.Get(v, "s1"); !errors.Is(err, projections.ErrNotFound) {
		t.Fatalf("Get after removal: %v, want ErrNotFound", err)
	}
	if pt.TableIndex(t, store, servers.Table) != 3 {
		t.Fatalf("table index %d, want 3", pt.TableIndex(t, store, servers.Table))
	}
	// Removing an unknown server changes nothing.
	pt.ApplyOne(t, f, 4, pt.Entry(t, "c4", &events.ServerRemoved{ID: "ghost"}))
	if pt.TableIndex(t, store, servers.Table) != 3 {
		t.Fatal("removing an unknown server moved the table index")
	}
	if list, _ := servers.List(v); len(list) != 1 || list[0].ID != "s2" {
		t.Fatalf("List = %+v", list)
	}
}
