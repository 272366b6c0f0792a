package compat

import (
	"errors"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"

	"github.com/ordoplane/ordo/storage/waittest"
)

// TestVariablesWithNomadClient drives variables through nomad/api's
// Variables(): create, read, checked create and update (ErrCASConflict
// carrying the current variable), list and prefix list, items, peek, and
// checked and plain deletes, in a namespace given by WriteOptions.
func TestVariablesWithNomadClient(t *testing.T) {
	_, c := startDev(t)
	if _, err := c.Namespaces().Register(&api.Namespace{Name: "team-a"}, nil); err != nil {
		t.Fatal(err)
	}
	vars := c.Variables()
	wo := &api.WriteOptions{Namespace: "team-a"}
	qo := &api.QueryOptions{Namespace: "team-a"}

	// The first root key is created by the leader just after it starts.
	var created *api.Variable
	var err error
	if !waittest.Poll(10*time.Second, func() bool {
		v := api.NewVariable("app/db")
		v.Items["password"] = "hunter2"
		created, _, err = vars.CheckedCreate(v, wo)
		return err == nil
	}) {
		t.Fatalf("create: %v", err)
	}
	if created.Namespace != "team-a" || created.Path != "app/db" || created.ModifyIndex == 0 || created.Items["password"] != "hunter2" {
		t.Fatalf("created %+v", created)
	}
	got, qm, err := vars.Read("app/db", qo)
	if err != nil || got.Items["password"] != "hunter2" || got.ModifyIndex != created.ModifyIndex || qm.LastIndex < created.ModifyIndex {
		t.Fatalf("read %+v %+v: %v", got, qm, err)
	}

	again := api.NewVariable("app/db")
	again.Items["password"] = "other"
	_, _, err = vars.CheckedCreate(again, wo)
	var conflict api.ErrCASConflict
	if !errors.As(err, &conflict) || conflict.Conflict == nil || conflict.Conflict.ModifyIndex != created.ModifyIndex ||
		conflict.Conflict.Items["password"] != "hunter2" {
		t.Fatalf("checked create of an existing variable: %v", err)
	}

	upd := got.Copy()
	upd.Items["password"] = "rotated"
	updated, _, err := vars.CheckedUpdate(upd, wo)
	if err != nil || updated.ModifyIndex <= created.ModifyIndex || updated.CreateIndex != created.CreateIndex {
		t.Fatalf("checked update: %+v %v", updated, err)
	}
	stale := got.Copy() // still at the created index
	if _, _, err := vars.CheckedUpdate(stale, wo); !errors.As(err, &conflict) {
		t.Fatalf("stale checked update: %v", err)
	}

	other := api.NewVariable("app/web")
	other.Items["token"] = "t"
	if _, _, err := vars.Create(other, wo); err != nil {
		t.Fatal(err)
	}
	plain := api.NewVariable("zzz")
	plain.Items["k"] = "v"
	if _, _, err := vars.Update(plain, wo); err != nil {
		t.Fatal(err)
	}
	list, _, err := vars.List(qo)
	if err != nil || len(list) != 3 || list[0].Path != "app/db" || list[2].Path != "zzz" {
		t.Fatalf("list %+v: %v", list, err)
	}
	pl, _, err := vars.PrefixList("app/", &api.QueryOptions{Namespace: "team-a"})
	if err != nil || len(pl) != 2 {
		t.Fatalf("prefix list %+v: %v", pl, err)
	}
	if def, _, err := vars.List(nil); err != nil || len(def) != 0 {
		t.Fatalf("default namespace list %+v: %v", def, err)
	}
	items, _, err := vars.GetVariableItems("app/db", qo)
	if err != nil || items["password"] != "rotated" {
		t.Fatalf("items %v: %v", items, err)
	}

	if _, err := vars.CheckedDelete("app/db", created.ModifyIndex, wo); !errors.As(err, &conflict) {
		t.Fatalf("checked delete at a stale index: %v", err)
	}
	if _, err := vars.CheckedDelete("app/db", updated.ModifyIndex, wo); err != nil {
		t.Fatal(err)
	}
	if _, err := vars.Delete("app/web", wo); err != nil {
		t.Fatal(err)
	}
	if v, _, err := vars.Peek("app/db", qo); err != nil || v != nil {
		t.Fatalf("peek after delete: %+v, %v", v, err)
	}
	if _, _, err := vars.Read("app/db", qo); !errors.Is(err, api.ErrVariablePathNotFound) {
		t.Fatalf("read after delete: %v", err)
	}
	// The namespace still holds zzz: its delete is refused (N9).
	if _, err := c.Namespaces().Delete("team-a", nil); err == nil {
		t.Fatal("deleted a namespace that holds a variable")
	}
}
