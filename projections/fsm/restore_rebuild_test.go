package fsm_test

import (
	"bytes"
	"math/rand"
	"testing"

	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/fsm"
	"github.com/ordoplane/ordo/projections/namespaces"
	pt "github.com/ordoplane/ordo/projections/projectionstest"
)

// TestSnapshotLeavesShadowOut: a raft snapshot taken while a rebuild runs
// carries neither the shadow nor the rebuild markers, which are local to
// the server building them.
func TestSnapshotLeavesShadowOut(t *testing.T) {
	rng := rand.New(rand.NewSource(31))
	store := pt.OpenStore(t)
	f, rb := openFSM(t, store, nil)
	applyInBatches(t, rng, f, randomLogs(t, rng, 400))
	var snap bytes.Buffer
	fsm.SetRebuildHook(rb, func(p fsm.RebuildProgress) {
		if snap.Len() > 0 || p.Events == 0 || p.Phase != fsm.PhaseBuilding {
			return
		}
		if !hasScratch(t, store.Dir()) || !hasPrefix(t, store, "rb/") {
			t.Error("no scratch store or marker while the rebuild runs")
		}
		s, err := f.Snapshot()
		if err != nil {
			t.Fatal(err)
		}
		defer s.Release()
		if err := s.Persist(&snap); err != nil {
			t.Fatal(err)
		}
	})
	if _, err := rb.Do(t.Context(), fsm.JobRebuild, nil); err != nil {
		t.Fatal(err)
	}
	if snap.Len() == 0 {
		t.Fatal("no snapshot was taken during the rebuild")
	}
	other := pt.OpenStore(t)
	f2 := pt.NewFSM(t, other)
	if err := f2.Restore(&snap); err != nil {
		t.Fatal(err)
	}
	if keys := localKeys(t, other); len(keys) != 0 {
		t.Errorf("the snapshot carried %d shadow or marker keys, such as %q", len(keys), keys[0])
	}
	want := pt.Checksums(t, store, allProjs())
	for name, sum := range pt.Checksums(t, other, allProjs()) {
		if w := want[name]; sum != w {
			t.Errorf("restored projection %s differs", name)
		}
	}
}

// TestRestoreRebuildsStale: a raft snapshot from a server running another
// version of a projection is rebuilt on restore, so the FSM can go on
// applying.
func TestRestoreRebuildsStale(t *testing.T) {
	rng := rand.New(rand.NewSource(41))
	leader := pt.OpenStore(t)
	f := pt.NewFSM(t, leader)
	logs := randomLogs(t, rng, 400)
	applyInBatches(t, rng, f, logs)
	s, err := f.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	var snap bytes.Buffer
	if err := s.Persist(&snap); err != nil {
		t.Fatal(err)
	}
	s.Release()

	set := []projections.Projection{bumpedProj{namespaces.Projection{}}, allProjs()[1]}
	follower := pt.OpenStore(t)
	f2, _ := openFSM(t, follower, nil, set...)
	if err := f2.Restore(bytes.NewReader(snap.Bytes())); err != nil {
		t.Fatal(err)
	}
	if len(f2.Stale()) != 0 {
		t.Fatalf("stale after restore: %v", f2.Stale())
	}
	checkAgainstScratch(t, follower, set)
	pt.ApplyOne(t, f2, uint64(len(logs)+1), pt.Entry(t, "after", upsert("after")))

	// Without AllowStale the restore refuses, as NewFSM does.
	strict := pt.OpenStore(t)
	f3 := pt.NewFSM(t, strict, set...)
	if err := f3.Restore(bytes.NewReader(snap.Bytes())); err == nil {
		t.Error("a strict FSM restored stale projections")
	}
}
