package keyring_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/keyring"
	pt "github.com/ordoplane/ordo/projections/projectionstest"
)

func upsert(id, state string) *events.RootKeyUpserted {
	return &events.RootKeyUpserted{Key: events.RootKeyMeta{KeyID: id, Algorithm: events.RootKeyAlgorithm, State: state, CreateTime: 7}}
}

// TestProjection covers N14's metadata operations: upsert, list, get by
// id, the active one, delete (with its tombstone).
func TestProjection(t *testing.T) {
	store := pt.OpenStore(t)
	f := pt.NewFSM(t, store)
	v := projections.NewView(store)

	if _, err := keyring.Active(v); !errors.Is(err, keyring.ErrNoActiveKey) {
		t.Fatalf("Active on an empty keyring = %v", err)
	}
	pt.ApplyOne(t, f, 1, pt.Entry(t, "c1", upsert("k1", events.RootKeyActive)))
	pt.ApplyOne(t, f, 2, pt.Entry(t, "c2", upsert("k2", events.RootKeyActive), upsert("k1", events.RootKeyInactive)))

	act, err := keyring.Active(v)
	if err != nil || act.KeyID != "k2" || act.CreateIndex != 2 {
		t.Fatalf("Active = %+v, %v", act, err)
	}
	k1, err := keyring.Get(v, "k1")
	if err != nil {
		t.Fatal(err)
	}
	want := &keyring.Key{RootKeyMeta: events.RootKeyMeta{KeyID: "k1", Algorithm: events.RootKeyAlgorithm, State: events.RootKeyInactive, CreateTime: 7},
		CreateIndex: 1, ModifyIndex: 2}
	if !reflect.DeepEqual(k1, want) {
		t.Fatalf("Get(k1) = %+v, want %+v", k1, want)
	}
	list, err := keyring.List(v)
	if err != nil || len(list) != 2 || list[0].KeyID != "k1" || list[1].KeyID != "k2" {
		t.Fatalf("List = %v, %v", list, err)
	}

	pt.ApplyOne(t, f, 3, pt.Entry(t, "c3", &events.RootKeyDeleted{KeyID: "k1"}))
	if _, err := keyring.Get(v, "k1"); !errors.Is(err, projections.ErrNotFound) {
		t.Fatalf("Get after delete: %v", err)
	}
	if del, err := keyring.Deleted(v); err != nil || !reflect.DeepEqual(del, []string{"k1"}) {
		t.Fatalf("Deleted = %v, %v", del, err)
	}
	// Deleting an unknown key changes nothing (no tombstone).
	pt.ApplyOne(t, f, 4, pt.Entry(t, "c4", &events.RootKeyDeleted{KeyID: "nope"}))
	if del, _ := keyring.Deleted(v); !reflect.DeepEqual(del, []string{"k1"}) {
		t.Fatalf("Deleted after unknown delete = %v", del)
	}
}
