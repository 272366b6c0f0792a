package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/storage/snapshots"
)

// savedSnapshot saves a running dev server holding namespaces names to a
// snapshot file and returns its path.
func savedSnapshot(t *testing.T, names ...string) string {
	t.Helper()
	_, addr := startJobAgent(t)
	for _, n := range names {
		if code, _, stderr := runCLI("namespace", "apply", "-address", addr, "-description", "saved", n); code != 0 {
			t.Fatalf("namespace apply %s: %s", n, stderr)
		}
	}
	path := filepath.Join(t.TempDir(), "backup.snap")
	if code, _, stderr := runCLI("operator", "snapshot", "save", "-address", addr, path); code != 0 {
		t.Fatalf("snapshot save: %s", stderr)
	}
	return path
}

// rewriteSnapshot writes a copy of the snapshot file at path with each
// row passed through edit (nil drops it) and returns the copy's path.
func rewriteSnapshot(t *testing.T, path string, edit func(k, v []byte) []byte) string {
	t.Helper()
	in, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	var w *snapshots.Writer
	r, err := snapshots.NewReader(bytes.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if w, err = snapshots.NewWriter(&out, r.Header()); err != nil {
		t.Fatal(err)
	}
	for {
		k, v, err := r.Next()
		if err != nil {
			break
		}
		if v = edit(k, v); v != nil {
			if err := w.Row(k, v); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	copyPath := filepath.Join(t.TempDir(), "edited.snap")
	if err := os.WriteFile(copyPath, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return copyPath
}

// A snapshot file replays like a history file: its header, reads of its
// state, reads at an earlier index (rebuilt from its archive).
func TestReplayOfASnapshotFile(t *testing.T) {
	path := savedSnapshot(t, "team-a", "team-b")
	code, out, stderr := runCLI("replay", path)
	if code != 0 || !strings.Contains(out, "snapshot (the whole state at one index)") || !strings.Contains(stderr, "read-only") {
		t.Fatalf("replay header: %d %s %s", code, out, stderr)
	}
	code, out, stderr = runCLI("replay", path, "--", "namespace", "list")
	if code != 0 || !strings.Contains(out, "team-a") || !strings.Contains(out, "team-b") {
		t.Fatalf("replay namespace list: %d %s %s", code, out, stderr)
	}
	// At index 1 the cluster had no namespace yet.
	code, out, stderr = runCLI("replay", path, "--", "namespace", "list", "-at-index", "1")
	if code != 0 || strings.Contains(out, "team-a") {
		t.Fatalf("replay namespace list -at-index 1: %d %s %s", code, out, stderr)
	}
	bad, _ := os.ReadFile(path)
	bad[len(bad)/2] ^= 1
	badPath := filepath.Join(t.TempDir(), "bad.snap")
	os.WriteFile(badPath, bad, 0o644)
	if code, _, stderr := runCLI("replay", badPath, "--", "namespace", "list"); code == 0 || !strings.Contains(stderr, "ordo: snapshot file") {
		t.Fatalf("a damaged snapshot replayed: %d %s", code, stderr)
	}
}

// A snapshot whose namespaces projection was saved at another version is
// replayed with that projection rebuilt from the file's archive: a row
// the file lacks comes back from the events that wrote it.
func TestReplayOfASnapshotRebuildsStaleProjections(t *testing.T) {
	path := savedSnapshot(t, "team-a", "team-b")
	edited := rewriteSnapshot(t, path, func(k, v []byte) []byte {
		switch {
		case string(k) == "pm/namespaces":
			b, err := msgpack.Marshal(&projections.Meta{Name: "namespaces", Version: 1})
			if err != nil {
				t.Fatal(err)
			}
			return b
		case bytes.HasPrefix(k, []byte("t/namespaces\x00team-b")):
			return nil // gone from the saved rows, still in the archive
		}
		return v
	})
	code, out, stderr := runCLI("replay", edited, "--", "namespace", "list")
	if code != 0 || !strings.Contains(out, "team-a") || !strings.Contains(out, "team-b") {
		t.Fatalf("replay of a stale snapshot: %d %s %s", code, out, stderr)
	}
	// Unchanged, the same rows would show team-b missing: the rebuild is
	// what brought it back.
	plain := rewriteSnapshot(t, path, func(k, v []byte) []byte {
		if bytes.HasPrefix(k, []byte("t/namespaces\x00team-b")) {
			return nil
		}
		return v
	})
	if code, out, _ := runCLI("replay", plain, "--", "namespace", "list"); code != 0 || strings.Contains(out, "team-b") {
		t.Fatalf("a snapshot without team-b's row listed it (%d): %s", code, out)
	}
}
