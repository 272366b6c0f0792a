package timetravel

import (
	"bytes"
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/ordoplane/ordo/projections/fsm"
	pt "github.com/ordoplane/ordo/projections/projectionstest"
)

// TestAtAfterOperatorRestore: the versions a server kept from before an
// operator restore describe a history the restore replaced; after it,
// reads are refused as being indexed until the store is started again
// and backfilled from the restored archive, and then a read at any index
// answers from it: the saved state's own history up to the index it was
// saved at, that state from there to the restore, and what followed.
func TestAtAfterOperatorRestore(t *testing.T) {
	h := newHistory(t)
	tt := newTT(t, h, Options{})
	h.apply(t, 120)
	early := h.record(t)
	h.apply(t, 60)
	saved := h.record(t)
	snap := h.store.Snapshot()
	payload := pt.RestorePayload(t, snap, 0) // its index is known only at the restore
	snap.Close()

	// The history the restore replaces, read from before it.
	h.apply(t, 120)
	lost := h.record(t)
	checksumsAt(t, tt, lost)
	checksumsAt(t, tt, lost-20)

	at := h.fsm.Applied() + 50
	if err := fsm.SetRestoreIndex(payload, at); err != nil {
		t.Fatal(err)
	}
	if _, err := payload.Seek(0, 0); err != nil {
		t.Fatal(err)
	}
	if err := h.fsm.Restore(payload); err != nil {
		t.Fatal(err)
	}
	var ns *NotServedError
	if _, err := tt.At(context.Background(), early); !errors.As(err, &ns) || !ns.Retryable() {
		t.Fatalf("At(%d) after the restore, before the store starts again = %v", early, err)
	}
	h.next = at + 1
	h.apply(t, 30)
	after := h.record(t)
	backfilled(t, tt, 1)

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

// TestAtAfterInstalledSnapshot: a follower that installs the leader's raft
// snapshot (the same history, further on) keeps what its versions store
// held, and the backfill fills the entries it skipped from the installed
// archive: reads there equal the leader's states.
func TestAtAfterInstalledSnapshot(t *testing.T) {
	follower, leader := newHistory(t), newHistory(t) // one seed: the same entries
	tt := newTT(t, follower, Options{})
	follower.applyIn(t, 60, 5)
	leader.applyIn(t, 60, 5)
	before := follower.record(t)
	leader.applyIn(t, 40, 5)
	skipped := leader.record(t)
	leader.applyIn(t, 40, 5)
	installed := leader.record(t)

	snap, err := leader.fsm.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := snap.Persist(&buf); err != nil {
		t.Fatal(err)
	}
	snap.Release()
	if err := follower.fsm.Restore(&buf); err != nil {
		t.Fatal(err)
	}
	follower.next = leader.next
	follower.applyIn(t, 20, 5)
	after := follower.record(t)
	backfilled(t, tt, 0)
	for _, c := range []struct {
		name  string
		index uint64
		want  map[string][32]byte
	}{
		{"before the install", before, follower.sums[before]},
		{"skipped by the install", skipped, leader.sums[skipped]},
		{"the installed index", installed, leader.sums[installed]},
		{"after the install", after, follower.sums[after]},
	} {
		if got := checksumsAt(t, tt, c.index); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: At(%d) differs from the state it should show", c.name, c.index)
		}
	}
	wantCount(t, tt.metrics.backfills, 1, "backfills (the skipped entries)")
}
