package namespaces_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/namespaces"
	pt "github.com/ordoplane/ordo/projections/projectionstest"
	"github.com/ordoplane/ordo/projections/rebuild"
)

func upsert(name, desc string, meta map[string]string) *events.NamespaceUpserted {
	return &events.NamespaceUpserted{Namespace: events.Namespace{Name: name, Description: desc, Meta: meta}}
}

func TestProjection(t *testing.T) {
	store := pt.OpenStore(t)
	f := pt.NewFSM(t, store)
	v := projections.NewView(store)

	pt.ApplyOne(t, f, 1, pt.Entry(t, "c1", upsert("web", "front", map[string]string{"team": "a"}), upsert("db", "", nil)))
	pt.ApplyOne(t, f, 2, pt.Entry(t, "c2", upsert("web-api", "api", nil)))
	pt.ApplyOne(t, f, 3, pt.Entry(t, "c3", upsert("web", "front ends", map[string]string{"team": "b", "tier": "1"})))

	web, err := namespaces.Get(v, "web")
	if err != nil {
		t.Fatal(err)
	}
	want := &namespaces.Namespace{Name: "web", Description: "front ends", Meta: map[string]string{"team": "b", "tier": "1"}, CreateIndex: 1, ModifyIndex: 3}
	if !reflect.DeepEqual(web, want) {
		t.Fatalf("Get(web) = %+v, want %+v", web, want)
	}
	names := func(prefix string) []string {
		t.Helper()
		list, err := namespaces.List(v, prefix)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, ns := range list {
			out = append(out, ns.Name)
		}
		return out
	}
	if got := names(""); !reflect.DeepEqual(got, []string{"db", "web", "web-api"}) {
		t.Fatalf("List = %v", got)
	}
	if got := names("web"); !reflect.DeepEqual(got, []string{"web", "web-api"}) {
		t.Fatalf("List(web) = %v", got)
	}
	if got := names("x"); got != nil {
		t.Fatalf("List(x) = %v", got)
	}

	// Deleting and re-creating starts a new life: a new create index.
	pt.ApplyOne(t, f, 4, pt.Entry(t, "c4", &events.NamespaceDeleted{Name: "web"}))
	if _, err := namespaces.Get(v, "web"); !errors.Is(err, projections.ErrNotFound) {
		t.Fatalf("Get after delete: %v, want ErrNotFound", err)
	}
	pt.ApplyOne(t, f, 5, pt.Entry(t, "c5", upsert("web", "again", nil)))
	web, _ = namespaces.Get(v, "web")
	if web.CreateIndex != 5 || web.ModifyIndex != 5 || web.Meta != nil || web.Description != "again" {
		t.Fatalf("re-created web = %+v", web)
	}
}

func TestIgnoresOtherEvents(t *testing.T) {
	store := pt.OpenStore(t)
	f := pt.NewFSM(t, store, namespaces.Projection{})
	pt.ApplyOne(t, f, 1, pt.Entry(t, "c1", &events.ServerRegistered{ID: "s1", RaftAddr: "a", HTTPAddr: "b"}))
	if list, err := namespaces.List(projections.NewView(store), ""); err != nil || len(list) != 0 {
		t.Fatalf("List = %v, %v", list, err)
	}
	if pt.TableIndex(t, store, namespaces.Table) != 0 {
		t.Fatal("an unrelated event moved the namespaces table index")
	}
}

// TestAppliesVersion1 replays an event written in NamespaceUpserted's
// flat version 1 shape: the projection reads it through the upcaster.
func TestAppliesVersion1(t *testing.T) {
	raw, err := msgpack.Marshal(map[string]string{"name": "legacy", "desc": "from v1"})
	if err != nil {
		t.Fatal(err)
	}
	e := &events.Entry{Time: pt.LeaderTime, CommandID: "old", Events: []events.Event{{
		Type: "NamespaceUpserted", Version: 1, ID: "ev",
		Keys: []events.Key{{Kind: events.KindNamespace, Value: "legacy"}}, Payload: raw,
	}}}
	store := pt.OpenStore(t)
	f := pt.NewFSM(t, store)
	if res := pt.ApplyOne(t, f, 1, e); res.Err != nil {
		t.Fatal(res.Err)
	}
	ns, err := namespaces.Get(projections.NewView(store), "legacy")
	if err != nil {
		t.Fatal(err)
	}
	if ns.Description != "from v1" || ns.Meta != nil || ns.CreateIndex != 1 {
		t.Fatalf("v1 namespace = %+v", ns)
	}
	// Rebuilding from the archive reads the same old event the same way.
	dst := pt.OpenStore(t)
	if _, err := rebuild.Rebuild(store, dst, []projections.Projection{namespaces.Projection{}}, 0, nil); err != nil {
		t.Fatal(err)
	}
	if got, want := pt.Checksums(t, dst, []projections.Projection{namespaces.Projection{}}), pt.Checksums(t, store, []projections.Projection{namespaces.Projection{}}); !reflect.DeepEqual(got, want) {
		t.Fatal("rebuilt v1 namespace differs")
	}
}

func TestMetadata(t *testing.T) {
	p := namespaces.Projection{}
	if p.Name() != "namespaces" || p.Version() < 1 || !reflect.DeepEqual(p.Tables(), []string{namespaces.Table}) {
		t.Fatalf("%s v%d tables %v", p.Name(), p.Version(), p.Tables())
	}
}
