package storagetest

import (
	"bytes"
	"testing"

	"github.com/hashicorp/raft"
)

// Keys hashicorp/raft keeps in its StableStore.
var (
	keyCurrentTerm  = []byte("CurrentTerm")
	keyLastVoteTerm = []byte("LastVoteTerm")
	keyLastVoteCand = []byte("LastVoteCand")
)

// StableStoreSuite checks what hashicorp/raft relies on from a
// raft.StableStore. open must return a new, empty store for each call and
// register its own cleanup with t.
func StableStoreSuite(t *testing.T, open func(t *testing.T) raft.StableStore) {
	t.Run("Missing", func(t *testing.T) {
		s := open(t)
		for _, k := range [][]byte{keyCurrentTerm, keyLastVoteTerm, keyLastVoteCand, {}, {0}} {
			checkGetMissing(t, s, k)
			checkGetUint64Missing(t, s, k)
		}
	})

	t.Run("SetGet", func(t *testing.T) {
		s := open(t)
		mustSet(t, s, keyLastVoteCand, []byte("node-1"))
		checkGet(t, s, keyLastVoteCand, []byte("node-1"))
		mustSet(t, s, keyLastVoteCand, []byte("node-22"))
		checkGet(t, s, keyLastVoteCand, []byte("node-22"))

		bin := []byte{0, 0xff, 0}
		mustSet(t, s, bin, []byte{1, 0, 2})
		checkGet(t, s, bin, []byte{1, 0, 2})
		mustSet(t, s, []byte("empty"), []byte{})
		checkGet(t, s, []byte("empty"), []byte{})

		// Keys that prefix each other are distinct.
		mustSet(t, s, []byte("a"), []byte("1"))
		mustSet(t, s, []byte("ab"), []byte("2"))
		checkGet(t, s, []byte("a"), []byte("1"))
		checkGet(t, s, []byte("ab"), []byte("2"))
		checkGetMissing(t, s, []byte("abc"))
		checkGetMissing(t, s, []byte("b"))
	})

	t.Run("SetGetUint64", func(t *testing.T) {
		s := open(t)
		for _, v := range []uint64{0, 1, 255, 256, 1 << 32, ^uint64(0)} {
			mustSetUint64(t, s, keyCurrentTerm, v)
			checkGetUint64(t, s, keyCurrentTerm, v)
		}
		mustSetUint64(t, s, keyLastVoteTerm, 7)
		checkGetUint64(t, s, keyLastVoteTerm, 7)
		checkGetUint64(t, s, keyCurrentTerm, ^uint64(0))
		checkGetUint64Missing(t, s, []byte("Other"))
	})
}

func mustSet(t testing.TB, s raft.StableStore, k, v []byte) {
	t.Helper()
	if err := s.Set(k, v); err != nil {
		t.Fatalf("Set(%q): %v", k, err)
	}
}

func mustSetUint64(t testing.TB, s raft.StableStore, k []byte, v uint64) {
	t.Helper()
	if err := s.SetUint64(k, v); err != nil {
		t.Fatalf("SetUint64(%q, %d): %v", k, v, err)
	}
}

func checkGet(t testing.TB, s raft.StableStore, k, want []byte) {
	t.Helper()
	got, err := s.Get(k)
	if err != nil {
		t.Fatalf("Get(%q): %v", k, err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("Get(%q) = %q, want %q", k, got, want)
	}
}

func checkGetUint64(t testing.TB, s raft.StableStore, k []byte, want uint64) {
	t.Helper()
	got, err := s.GetUint64(k)
	if err != nil {
		t.Fatalf("GetUint64(%q): %v", k, err)
	}
	if got != want {
		t.Fatalf("GetUint64(%q) = %d, want %d", k, got, want)
	}
}

// checkGetMissing checks Get of a missing key as raft does: by the error text.
func checkGetMissing(t testing.TB, s raft.StableStore, k []byte) {
	t.Helper()
	got, err := s.Get(k)
	if err == nil || err.Error() != "not found" {
		t.Fatalf("Get(missing %q) = %q, %v; want an error with text %q", k, got, err, "not found")
	}
	if len(got) != 0 {
		t.Fatalf("Get(missing %q) = %q, want no value", k, got)
	}
}

// checkGetUint64Missing checks GetUint64 of a missing key as raft does: 0,
// and no error or one with the text "not found".
func checkGetUint64Missing(t testing.TB, s raft.StableStore, k []byte) {
	t.Helper()
	got, err := s.GetUint64(k)
	if err != nil && err.Error() != "not found" {
		t.Fatalf("GetUint64(missing %q) error %v, want none or text %q", k, err, "not found")
	}
	if got != 0 {
		t.Fatalf("GetUint64(missing %q) = %d, want 0", k, got)
	}
}
