package fsm_test

import (
	"bytes"
	"os"
	"reflect"
	"testing"

	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/fsm"
	pt "github.com/ordoplane/ordo/projections/projectionstest"
	"github.com/ordoplane/ordo/storage/kv"
)

func restoreFrom(t *testing.T, f *fsm.FSM, payload *os.File) {
	t.Helper()
	if _, err := payload.Seek(0, 0); err != nil {
		t.Fatal(err)
	}
	if err := f.Restore(payload); err != nil {
		t.Fatal(err)
	}
}

// An operator's restore installs a state saved at an older index than the
// destination holds — which a raft snapshot of that state would be skipped
// for — and stands it at the payload's index, so the entries raft applies
// next follow it; the same payload again (a restart, where raft restores
// its newest snapshot) is skipped.
func TestOperatorRestoreInstallsAnOlderStateAtItsIndex(t *testing.T) {
	saved := pt.OpenStore(t)
	fs := pt.NewFSM(t, saved)
	populate(t, fs, 1) // the saved state, at index 5

	dst := pt.OpenStore(t)
	fd := pt.NewFSM(t, dst)
	populate(t, fd, 1)
	pt.ApplyOne(t, fd, 6, pt.Entry(t, "later", upsert("later")))
	for i := uint64(7); i <= 20; i++ {
		pt.ApplyOne(t, fd, i, pt.Entry(t, "", upsert("more")))
	}
	// A raft snapshot of the saved state is skipped: the destination is newer.
	if err := fd.Restore(bytes.NewReader(persist(t, fs))); err != nil {
		t.Fatal(err)
	}
	if _, ok := getNS(t, dst, "later"); !ok {
		t.Fatal("a raft snapshot older than the state replaced it")
	}

	const at = 4100
	payload := pt.RestorePayload(t, saved, at)
	restoreFrom(t, fd, payload)
	if fd.Applied() != at {
		t.Fatalf("restored FSM applied %d, want the payload's %d", fd.Applied(), at)
	}
	if idx, _ := projections.NewView(dst).AppliedIndex(); idx != at {
		t.Fatalf("restored store records applied %d, want %d", idx, at)
	}
	if _, ok := getNS(t, dst, "later"); ok {
		t.Fatal("the restore kept a namespace the saved state does not have")
	}
	if a, b := pt.Checksums(t, saved, allProjs()), pt.Checksums(t, dst, allProjs()); !reflect.DeepEqual(a, b) {
		t.Fatal("restored projections differ from the saved ones")
	}
	if !reflect.DeepEqual(pt.Archived(t, saved), pt.Archived(t, dst)) {
		t.Fatal("restored archive differs from the saved one")
	}

	// Raft applies on from the payload's index.
	pt.ApplyOne(t, fd, at+1, pt.Entry(t, "after", upsert("after")))
	if _, ok := getNS(t, dst, "after"); !ok || fd.Applied() != at+1 {
		t.Fatalf("the entry after the restore: applied %d", fd.Applied())
	}
	// The payload again is skipped: the state is at or past its index.
	restoreFrom(t, fd, payload)
	if _, ok := getNS(t, dst, "after"); !ok || fd.Applied() != at+1 {
		t.Fatal("the restore's payload installed twice over later state")
	}
}

// A restore payload carries what a raft snapshot carries, not the saved
// applied index (the payload's stands instead) nor what is local to the
// saving server.
func TestRestorePayloadDropsLocalKeys(t *testing.T) {
	saved := pt.OpenStore(t)
	populate(t, pt.NewFSM(t, saved), 1)
	w := saved.WriteBatch()
	for _, k := range []string{"sh/t/namespaces\x00x", "rb/namespaces"} {
		if err := w.Set([]byte(k), []byte("local")); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Commit(false); err != nil {
		t.Fatal(err)
	}
	var rows int
	fsm.SavedRows(saved, func(k, _ []byte) error {
		if bytes.HasPrefix(k, []byte("sh/")) || bytes.HasPrefix(k, []byte("rb/")) {
			t.Fatalf("SavedRows returned a local key %q", k)
		}
		rows++
		return nil
	})
	if rows == 0 {
		t.Fatal("SavedRows returned nothing")
	}
	dst := pt.OpenStore(t)
	fd := pt.NewFSM(t, dst)
	restoreFrom(t, fd, pt.RestorePayload(t, saved, 9))
	for _, k := range []string{"sh/t/namespaces\x00x", "rb/namespaces"} {
		if _, err := dst.Get([]byte(k)); err != kv.ErrNotFound {
			t.Fatalf("the restore installed the local key %q (%v)", k, err)
		}
	}
	if fd.Applied() != 9 {
		t.Fatalf("applied %d, want 9", fd.Applied())
	}
}
