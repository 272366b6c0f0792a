package projections_test

import (
	"errors"
	"testing"

	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/fsm"
	"github.com/ordoplane/ordo/projections/namespaces"
	pt "github.com/ordoplane/ordo/projections/projectionstest"
	"github.com/ordoplane/ordo/projections/rebuild"
	"github.com/ordoplane/ordo/projections/servers"
	"github.com/ordoplane/ordo/storage/kv"
)

// bumped is a projection whose stored shape changed.
type bumped struct{ namespaces.Projection }

func (bumped) Version() int { return namespaces.Projection{}.Version() + 1 }

// extra is a projection added after the store was written.
type extra struct{ servers.Projection }

func (extra) Name() string { return "extra" }

func TestCheckVersions(t *testing.T) {
	dir := t.TempDir()
	store, err := kv.Open(dir, kv.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { store.Close() }()

	// A fresh store takes whatever versions it is opened with; a read-only
	// view of it has nothing to check yet.
	if err := projections.CheckVersions(projections.NewView(store), []projections.Projection{bumped{}}); err != nil {
		t.Fatalf("fresh store: %v", err)
	}
	f := pt.NewFSM(t, store)
	pt.ApplyOne(t, f, 1, pt.Entry(t, "c1", upsert("a")))
	f.Close()

	v := projections.NewView(store)
	if err := projections.CheckVersions(v, allProjs()); err != nil {
		t.Fatalf("same versions: %v", err)
	}
	for name, projs := range map[string][]projections.Projection{
		"changed version":  {bumped{}, servers.Projection{}},
		"added projection": append(allProjs(), extra{}),
	} {
		if err := projections.CheckVersions(v, projs); !errors.Is(err, projections.ErrRebuildNeeded) {
			t.Errorf("%s: CheckVersions = %v, want ErrRebuildNeeded", name, err)
		}
		if _, err := pt.TryNewFSM(store, projs...); !errors.Is(err, projections.ErrRebuildNeeded) {
			t.Errorf("%s: NewFSM = %v, want ErrRebuildNeeded", name, err)
		}
	}
	// Rebuilding into a fresh store with the new version works, and an FSM
	// of that version then opens it.
	fresh := pt.OpenStore(t)
	projs := []projections.Projection{bumped{}, servers.Projection{}}
	if _, err := rebuild.Rebuild(store, fresh, projs, 0, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := pt.TryNewFSM(fresh, projs...); err != nil {
		t.Fatalf("FSM over the rebuilt store: %v", err)
	}
	// The older version is a downgrade: refused, not rebuilt (compat.go).
	if _, err := pt.TryNewFSM(fresh); !errors.Is(err, fsm.ErrDowngrade) {
		t.Fatalf("old version over the rebuilt store: %v, want ErrDowngrade", err)
	}
	// Versions survive a reopen.
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}
	store, err = kv.Open(dir, kv.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pt.TryNewFSM(store, bumped{}, servers.Projection{}); !errors.Is(err, projections.ErrRebuildNeeded) {
		t.Fatalf("after reopen: %v, want ErrRebuildNeeded", err)
	}
}
