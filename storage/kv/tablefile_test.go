package kv

import (
	"errors"
	"maps"
	"os"
	"path/filepath"
	"testing"

	"github.com/cockroachdb/pebble"
	"github.com/cockroachdb/pebble/sstable"
)

func openTest(t *testing.T, dir string) *Store {
	t.Helper()
	s, err := Open(dir, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func mustSet(t *testing.T, s *Store, kvs ...string) {
	t.Helper()
	wb := s.WriteBatch()
	for i := 0; i < len(kvs); i += 2 {
		if err := wb.Set([]byte(kvs[i]), []byte(kvs[i+1])); err != nil {
			t.Fatal(err)
		}
	}
	if err := wb.Commit(false); err != nil {
		t.Fatal(err)
	}
}

func contents(t *testing.T, r Reader) map[string]string {
	t.Helper()
	out := map[string]string{}
	if err := r.Scan(nil, nil, false, func(k, v []byte) error {
		out[string(k)] = string(v)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestReplace: the file's range deletion removes what the store held in
// the range but not the file's own keys, the batch lands over the file,
// readers are held back between the two, a snapshot from before sees none
// of it, and the file is gone afterwards.
func TestReplace(t *testing.T) {
	s := openTest(t, t.TempDir())
	mustSet(t, s, "a/1", "old", "a/2", "old", "a/3", "old", "b/x", "old", "c", "old")
	before := s.Snapshot()
	defer before.Close()

	f, err := s.NewTableFile()
	if err != nil {
		t.Fatal(err)
	}
	for _, step := range []func() error{
		func() error { return f.DeleteRange([]byte("a/"), PrefixEnd([]byte("a/"))) },
		func() error { return f.Set([]byte("a/2"), []byte("file")) },
		func() error { return f.Set([]byte("a/9"), []byte("file")) },
		func() error { return f.Delete([]byte("b/x")) },
	} {
		if err := step(); err != nil {
			t.Fatal(err)
		}
	}
	wb := s.WriteBatch()
	if err := wb.Set([]byte("a/9"), []byte("batch")); err != nil {
		t.Fatal(err)
	}
	if err := wb.Delete([]byte("a/2")); err != nil {
		t.Fatal(err)
	}
	var readersHeld, hookRan bool
	s.SetReplaceHook(func() error {
		hookRan = true
		if s.gate.TryRLock() {
			s.gate.RUnlock()
			return nil
		}
		readersHeld = true
		return nil
	})
	held, err := s.Replace([]*TableFile{f}, wb)
	if err != nil {
		t.Fatal(err)
	}
	if !hookRan || !readersHeld {
		t.Errorf("between the ingest and the batch: hook ran %v, readers held %v", hookRan, readersHeld)
	}
	if held <= 0 {
		t.Errorf("readers held %v", held)
	}
	want := map[string]string{"a/9": "batch", "c": "old"}
	if got := contents(t, s); !maps.Equal(got, want) {
		t.Errorf("after Replace: %v, want %v", got, want)
	}
	if got := contents(t, before); len(got) != 5 || got["a/2"] != "old" {
		t.Errorf("a snapshot from before sees %v", got)
	}
	if left, _ := os.ReadDir(filepath.Join(s.dir, tableFilesDir)); len(left) != 0 {
		t.Errorf("table files left: %v", left)
	}
}

// TestTableFileOrder: keys out of order and overlapping ranges are refused
// as they are written, not at the ingest.
func TestTableFileOrder(t *testing.T) {
	s := openTest(t, t.TempDir())
	f, err := s.NewTableFile()
	if err != nil {
		t.Fatal(err)
	}
	defer f.Discard()
	if err := f.Set([]byte("b"), nil); err != nil {
		t.Fatal(err)
	}
	for name, err := range map[string]error{
		"same key":   f.Set([]byte("b"), nil),
		"key before": f.Delete([]byte("a")),
	} {
		if err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if err := f.DeleteRange([]byte("m"), []byte("p")); err != nil {
		t.Fatal(err)
	}
	for name, err := range map[string]error{
		"overlapping range": f.DeleteRange([]byte("o"), []byte("q")),
		"empty range":       f.DeleteRange([]byte("x"), []byte("x")),
	} {
		if err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if f.Keys() != 2 {
		t.Errorf("Keys() = %d, want 2", f.Keys())
	}
}

// TestTableFilesCleared: a discarded file is removed, and one a stop left
// behind is removed when the store opens again.
func TestTableFilesCleared(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	discarded, err := s.NewTableFile()
	if err != nil {
		t.Fatal(err)
	}
	discarded.Discard()
	if _, err := os.Stat(discarded.path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a discarded file is still there: %v", err)
	}
	left, err := s.NewTableFile()
	if err != nil {
		t.Fatal(err)
	}
	if err := left.Set([]byte("k"), []byte("v")); err != nil {
		t.Fatal(err)
	}
	if err := left.Finish(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openTest(t, dir)
	if _, err := os.Stat(left.path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a file left by a stop survived the open: %v", err)
	}
	if _, err := s.Get([]byte("k")); !errors.Is(err, ErrNotFound) {
		t.Errorf("a file never ingested reached the store: %v", err)
	}
}

// TestTableFilesOfAnotherOwner: an Open refused because the store is open
// leaves the owner's table file alone.
func TestTableFilesOfAnotherOwner(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir)
	f, err := s.NewTableFile()
	if err != nil {
		t.Fatal(err)
	}
	defer f.Discard()
	if other, err := Open(dir, DefaultConfig()); err == nil {
		other.Close()
		t.Fatal("a second open of a store in use succeeded")
	}
	if _, err := os.Stat(f.path); err != nil {
		t.Errorf("the refused open removed the owner's table file: %v", err)
	}
}

// TestFormatUpgrade: a store written at Pebble's oldest format opens with
// its data at formatVersion, where an ingest over what the memtables hold
// is queued behind them rather than flushing them first (Replace with the
// FSM stopped).
func TestFormatUpgrade(t *testing.T) {
	dir := t.TempDir()
	old, err := pebble.Open(dir, &pebble.Options{FormatMajorVersion: pebble.FormatMostCompatible})
	if err != nil {
		t.Fatal(err)
	}
	if err := old.Set([]byte("k"), []byte("v"), pebble.Sync); err != nil {
		t.Fatal(err)
	}
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}
	s := openTest(t, dir)
	if got := s.db.FormatMajorVersion(); got < pebble.FormatFlushableIngest {
		t.Fatalf("format %s, want at least %s", got, pebble.FormatFlushableIngest)
	}
	if v, err := s.Get([]byte("k")); err != nil || string(v) != "v" {
		t.Fatalf("after the upgrade: %q, %v", v, err)
	}
}

// fileOverOld writes "a/1" and "b" as "old" into s (its memtable holds
// them) and returns a table file setting "a/1" to "file".
func fileOverOld(t *testing.T, s *Store) *TableFile {
	t.Helper()
	mustSet(t, s, "a/1", "old", "b", "old")
	f, err := s.NewTableFile()
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Set([]byte("a/1"), []byte("file")); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestReplaceHalfDone: a batch that fails after the ingest fails Replace
// with ErrHalfReplaced, the store holding the file's writes and none of
// the batch's.
func TestReplaceHalfDone(t *testing.T) {
	s := openTest(t, t.TempDir())
	f := fileOverOld(t, s)
	wb := s.WriteBatch()
	if err := wb.Set([]byte("b"), []byte("batch")); err != nil {
		t.Fatal(err)
	}
	disk := errors.New("disk full")
	s.SetReplaceHook(func() error { return disk })
	if _, err := s.Replace([]*TableFile{f}, wb); !errors.Is(err, ErrHalfReplaced) || !errors.Is(err, disk) {
		t.Fatalf("Replace = %v, want ErrHalfReplaced wrapping the batch's error", err)
	}
	for k, want := range map[string]string{"a/1": "file", "b": "old"} {
		if v, err := s.Get([]byte(k)); err != nil || string(v) != want {
			t.Errorf("%s = %q, %v; want %q", k, v, err, want)
		}
	}
}

// TestCheckpointAfterReplace: a checkpoint taken right after Replace
// ingested a file over what the memtable held (queued behind it, not yet
// in the LSM) opens and holds the file's writes.
func TestCheckpointAfterReplace(t *testing.T) {
	for i := range 5 {
		dir := t.TempDir()
		s := openTest(t, filepath.Join(dir, "store"))
		if _, err := s.Replace([]*TableFile{fileOverOld(t, s)}, s.WriteBatch()); err != nil {
			t.Fatal(err)
		}
		cp := filepath.Join(dir, "checkpoint")
		if err := s.Checkpoint(cp); err != nil {
			t.Fatal(err)
		}
		c, err := Open(cp, DefaultConfig())
		if err != nil {
			t.Fatalf("run %d: the checkpoint does not open: %v", i, err)
		}
		v, err := c.Get([]byte("a/1"))
		c.Close()
		if err != nil || string(v) != "file" {
			t.Fatalf("run %d: a/1 in the checkpoint = %q, %v; want the file's", i, v, err)
		}
	}
}

// TestReplaceFiles: files over ranges that do not overlap are ingested
// together, each file's range deletion removing what the store held in
// its own range only; a file with nothing in it is skipped; all are
// removed.
func TestReplaceFiles(t *testing.T) {
	s := openTest(t, t.TempDir())
	mustSet(t, s, "a/1", "old", "a/2", "old", "b/1", "old", "c", "old")
	file := func(steps ...func(*TableFile) error) *TableFile {
		t.Helper()
		f, err := s.NewTableFile()
		if err != nil {
			t.Fatal(err)
		}
		for _, step := range steps {
			if err := step(f); err != nil {
				t.Fatal(err)
			}
		}
		return f
	}
	a := file(func(f *TableFile) error { return f.DeleteRange([]byte("a/"), PrefixEnd([]byte("a/"))) },
		func(f *TableFile) error { return f.Set([]byte("a/3"), []byte("new")) })
	b := file(func(f *TableFile) error { return f.Set([]byte("b/2"), []byte("new")) })
	empty := file()
	wb := s.WriteBatch()
	if err := wb.Set([]byte("d"), []byte("batch")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Replace([]*TableFile{b, empty, a}, wb); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"a/3": "new", "b/1": "old", "b/2": "new", "c": "old", "d": "batch"}
	if got := contents(t, s); !maps.Equal(got, want) {
		t.Errorf("after Replace: %v, want %v", got, want)
	}
	if left, _ := os.ReadDir(filepath.Join(s.dir, tableFilesDir)); len(left) != 0 {
		t.Errorf("table files left: %v", left)
	}
}

// TestScanTableFileHasNoFilter: a table file for scanned keys is written
// without a Bloom filter, another with the store's, and both ingest and
// read alike.
func TestScanTableFileHasNoFilter(t *testing.T) {
	s := openTest(t, t.TempDir())
	for _, c := range []struct {
		newFile func() (*TableFile, error)
		key     string
		filter  bool
	}{{s.NewTableFile, "a/1", true}, {s.NewScanTableFile, "b/1", false}} {
		f, err := c.newFile()
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Set([]byte(c.key), []byte("v")); err != nil {
			t.Fatal(err)
		}
		if err := f.Finish(); err != nil {
			t.Fatal(err)
		}
		file, err := os.Open(f.path)
		if err != nil {
			t.Fatal(err)
		}
		readable, err := sstable.NewSimpleReadable(file)
		if err != nil {
			t.Fatal(err)
		}
		r, err := sstable.NewReader(readable, sstable.ReaderOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Properties.FilterPolicyName != ""; got != c.filter {
			t.Errorf("%s: filter %q, want one: %v", c.key, r.Properties.FilterPolicyName, c.filter)
		}
		r.Close()
		if _, err := s.Replace([]*TableFile{f}, s.WriteBatch()); err != nil {
			t.Fatal(err)
		}
		if v, err := s.Get([]byte(c.key)); err != nil || string(v) != "v" {
			t.Errorf("%s after the ingest: %q, %v", c.key, v, err)
		}
	}
}
