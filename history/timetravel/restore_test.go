package timetravel

import (
	"reflect"
	"testing"

	"github.com/ordoplane/ordo/projections"
	pt "github.com/ordoplane/ordo/projections/projectionstest"
)

// TestAtAfterOperatorRestore: what a server kept of its past states —
// versions, checkpoints, redo records, cached states — from before an
// operator restore describes a history the restore replaced; after it,
// a read at any index answers from the restored archive: the saved
// state's own history up to the index it was saved at, that state from
// there to the restore, and what followed.
func TestAtAfterOperatorRestore(t *testing.T) {
	for name, o := range map[string]Options{
		"versions": {CacheSize: 4, CheckpointsKept: 10},
		"redo":     {CacheSize: 4, CheckpointsKept: 10, DisableVersions: true},
		"events":   {CacheSize: 4, CheckpointsKept: 10, DisableVersions: true, DisableRedo: true},
	} {
		t.Run(name, func(t *testing.T) { testAtAfterOperatorRestore(t, o) })
	}
}

func testAtAfterOperatorRestore(t *testing.T, o Options) {
	h := newHistory(t)
	tt := newTT(t, h, o)
	h.apply(t, 120)
	early := h.record(t)
	if _, err := tt.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	h.apply(t, 60)
	saved := h.record(t)
	snap := h.store.Snapshot()
	payload := pt.RestorePayload(t, snap, 0) // its index is known only at the restore
	snap.Close()

	// The history the restore replaces: a checkpoint in it, and states
	// read (and cached) from it.
	h.apply(t, 80)
	if _, err := tt.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	h.apply(t, 40)
	lost := h.record(t)
	checksumsAt(t, tt, lost)
	checksumsAt(t, tt, lost-20)

	at := h.fsm.Applied() + 50
	if err := projections.SetRestoreIndex(payload, at); err != nil {
		t.Fatal(err)
	}
	if _, err := payload.Seek(0, 0); err != nil {
		t.Fatal(err)
	}
	if err := h.fsm.Restore(payload); err != nil {
		t.Fatal(err)
	}
	h.next = at + 1
	h.apply(t, 30)
	after := h.record(t)

	for _, c := range []struct {
		name  string
		index uint64
		want  map[string][32]byte
	}{
		{"before the save", early, h.sums[early]},
		{"the saved index", saved, h.sums[saved]},
		{"in the replaced history", lost, h.sums[saved]},
		{"in the replaced history, read before", lost - 20, h.sums[saved]},
		{"after the restore", after, h.sums[after]},
	} {
		if got := checksumsAt(t, tt, c.index); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: At(%d) differs from the state it should show", c.name, c.index)
		}
	}
}
