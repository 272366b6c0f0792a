package state_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/ordoplane/ordo/client/state"
)

// The watch index is 0 until stored, survives reopening the directory,
// and a damaged file is an error (the client logs it), not a silent 0.
func TestWatchIndex(t *testing.T) {
	dir := t.TempDir()
	st, err := state.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := st.WatchIndex(); err != nil || n != 0 {
		t.Fatalf("fresh watch index = %d, %v; want 0", n, err)
	}
	for _, want := range []uint64{4221, 80} {
		if err := st.PutWatchIndex(want); err != nil {
			t.Fatal(err)
		}
		again, err := state.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		if n, err := again.WatchIndex(); err != nil || n != want {
			t.Fatalf("watch index = %d, %v; want %d", n, err, want)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "client", "watch-index"), []byte("12x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if n, err := st.WatchIndex(); err == nil {
		t.Fatalf("a damaged watch index read as %d", n)
	}
}
