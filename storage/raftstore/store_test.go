package raftstore_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/hashicorp/raft"

	"github.com/ordoplane/ordo/storage/raftstore"
	"github.com/ordoplane/ordo/storage/storagetest"
)

// open opens a Store in dir with syncing on, as in production.
func open(t *testing.T, dir string) *raftstore.Store {
	t.Helper()
	s, err := raftstore.Open(dir, raftstore.DefaultConfig())
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return s
}

// openTemp opens a Store on a new directory and closes it when t ends.
func openTemp(t *testing.T) *raftstore.Store {
	t.Helper()
	s := open(t, t.TempDir())
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

func TestLogStoreSuite(t *testing.T) {
	storagetest.LogStoreSuite(t, func(t *testing.T) raft.LogStore { return openTemp(t) })
}

func TestStableStoreSuite(t *testing.T) {
	storagetest.StableStoreSuite(t, func(t *testing.T) raft.StableStore { return openTemp(t) })
}

func TestPersistenceSuite(t *testing.T) {
	storagetest.PersistenceSuite(t, func(t *testing.T, dir string) storagetest.Store { return open(t, dir) })
}

func TestMissingStableKeyIsErrKeyNotFound(t *testing.T) {
	s := openTemp(t)
	v, err := s.Get([]byte("CurrentTerm"))
	if err != raftstore.ErrKeyNotFound || v != nil { //nolint:errorlint // raft needs it unwrapped
		t.Fatalf("Get(missing) = %q, %v; want nil, ErrKeyNotFound", v, err)
	}
	n, err := s.GetUint64([]byte("CurrentTerm"))
	if err != raftstore.ErrKeyNotFound || n != 0 { //nolint:errorlint // raft needs it unwrapped
		t.Fatalf("GetUint64(missing) = %d, %v; want 0, ErrKeyNotFound", n, err)
	}
	if err.Error() != "not found" {
		t.Fatalf("ErrKeyNotFound text %q, want %q", err, "not found")
	}
}

func TestUint64IsBigEndian(t *testing.T) {
	s := openTemp(t)
	if err := s.SetUint64([]byte("k"), 0x0102030405060708); err != nil {
		t.Fatal(err)
	}
	v, err := s.Get([]byte("k"))
	if err != nil || !bytes.Equal(v, []byte{1, 2, 3, 4, 5, 6, 7, 8}) {
		t.Fatalf("Get = %x, %v; want 0102030405060708", v, err)
	}
	if err := s.Set([]byte("k"), binary.BigEndian.AppendUint64(nil, 42)); err != nil {
		t.Fatal(err)
	}
	if n, err := s.GetUint64([]byte("k")); n != 42 || err != nil {
		t.Fatalf("GetUint64 = %d, %v; want 42", n, err)
	}
	if err := s.Set([]byte("short"), []byte{1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetUint64([]byte("short")); err == nil || errors.Is(err, raftstore.ErrKeyNotFound) {
		t.Fatalf("GetUint64 of a 3-byte value = %v, want a size error", err)
	}
}

func TestStableKeysAreNotLogKeys(t *testing.T) {
	s := openTemp(t)
	if err := s.Set([]byte("l\x00\x00\x00\x00\x00\x00\x00\x05"), []byte("x")); err != nil {
		t.Fatal(err)
	}
	if first, _ := s.FirstIndex(); first != 0 {
		t.Fatalf("FirstIndex = %d after a stable Set, want 0", first)
	}
	var l raft.Log
	if err := s.GetLog(5, &l); err != raft.ErrLogNotFound { //nolint:errorlint // raft compares with ==
		t.Fatalf("GetLog(5) = %v, want ErrLogNotFound", err)
	}
}

// The store owns its memory: callers may change what they passed in or got
// back (raft.InmemStore, which the suite accepts, does not promise this).
func TestNoAliasing(t *testing.T) {
	s := openTemp(t)
	in := storagetest.Entry(3, 1)
	want := storagetest.Entry(3, 1)
	if err := s.StoreLog(in); err != nil {
		t.Fatal(err)
	}
	in.Data[0], in.Extensions[0] = 'X', 'X'
	var got raft.Log
	if err := s.GetLog(3, &got); err != nil {
		t.Fatal(err)
	}
	if d := storagetest.EqualLog(&got, want); d != "" {
		t.Fatalf("after changing the stored Log: %s", d)
	}
	got.Data[0] = 'Y'
	got.Extensions = append(got.Extensions, 'Z')
	got.Data = append(got.Data, 'Z')
	var again raft.Log
	if err := s.GetLog(3, &again); err != nil {
		t.Fatal(err)
	}
	if d := storagetest.EqualLog(&again, want); d != "" {
		t.Fatalf("after changing a returned Log: %s", d)
	}

	v := []byte("vote")
	if err := s.Set([]byte("k"), v); err != nil {
		t.Fatal(err)
	}
	v[0] = 'X'
	g, _ := s.Get([]byte("k"))
	g[1] = 'X'
	if g2, _ := s.Get([]byte("k")); string(g2) != "vote" {
		t.Fatalf("Get = %q after changing arguments and results, want %q", g2, "vote")
	}
}

func TestNilAndEmptySlicesRoundTrip(t *testing.T) {
	s := openTemp(t)
	logs := []*raft.Log{
		{Index: 1, Data: nil, Extensions: []byte{}},
		{Index: 2, Data: []byte{}, Extensions: nil},
	}
	if err := s.StoreLogs(logs); err != nil {
		t.Fatal(err)
	}
	for _, w := range logs {
		var got raft.Log
		if err := s.GetLog(w.Index, &got); err != nil {
			t.Fatal(err)
		}
		if (got.Data == nil) != (w.Data == nil) || (got.Extensions == nil) != (w.Extensions == nil) {
			t.Errorf("GetLog(%d): Data nil %v, Extensions nil %v; want %v, %v", w.Index,
				got.Data == nil, got.Extensions == nil, w.Data == nil, w.Extensions == nil)
		}
		if !got.AppendedAt.IsZero() || got.AppendedAt != (w.AppendedAt) {
			t.Errorf("GetLog(%d): AppendedAt %v, want the zero time", w.Index, got.AppendedAt)
		}
	}
}

// Unlike raft.InmemStore, the bounds are the stored indexes even when
// DeleteRange ends at a gap.
func TestDeleteRangeAcrossGaps(t *testing.T) {
	s := openTemp(t)
	mustStore := func(logs []*raft.Log) {
		t.Helper()
		if err := s.StoreLogs(logs); err != nil {
			t.Fatal(err)
		}
	}
	bounds := func(del [2]uint64, first, last uint64) {
		t.Helper()
		if err := s.DeleteRange(del[0], del[1]); err != nil {
			t.Fatal(err)
		}
		f, _ := s.FirstIndex()
		l, _ := s.LastIndex()
		if f != first || l != last {
			t.Fatalf("after DeleteRange(%d, %d): bounds %d, %d; want %d, %d", del[0], del[1], f, l, first, last)
		}
	}
	mustStore(storagetest.Entries(1, 10, 1))
	mustStore(storagetest.Entries(50, 60, 1))
	mustStore(storagetest.Entries(100, 110, 1))
	bounds([2]uint64{5, 1}, 1, 110)     // min > max: nothing
	bounds([2]uint64{200, 300}, 1, 110) // past the end: nothing
	bounds([2]uint64{1, 20}, 50, 110)   // prefix ending in a gap
	bounds([2]uint64{105, 2000}, 50, 104)
	bounds([2]uint64{70, 104}, 50, 60) // suffix starting in a gap
	bounds([2]uint64{0, 49}, 50, 60)   // before the start: nothing

	mustStore([]*raft.Log{{Index: ^uint64(0), Term: 1}})
	bounds([2]uint64{0, 55}, 56, ^uint64(0))
	bounds([2]uint64{^uint64(0), ^uint64(0)}, 56, 60)
	bounds([2]uint64{0, ^uint64(0)}, 0, 0)
}

func TestConfig(t *testing.T) {
	if err := raftstore.DefaultConfig().Validate(); err != nil {
		t.Fatalf("DefaultConfig().Validate() = %v", err)
	}
	if raftstore.DefaultConfig().NoSync {
		t.Fatal("DefaultConfig has NoSync set")
	}
	for name, c := range map[string]raftstore.Config{
		"negative cache": {CacheBytes: -1},
	} {
		if err := c.Validate(); err == nil {
			t.Errorf("%s: Validate() = nil, want an error", name)
		}
		if s, err := raftstore.Open(t.TempDir(), c); err == nil {
			s.Close()
			t.Errorf("%s: Open succeeded, want an error", name)
		}
	}
	if err := (raftstore.Config{}).Validate(); err != nil {
		t.Errorf("zero Config: Validate() = %v, want nil (Pebble's defaults)", err)
	}
}

func TestOpenErrorNamesDir(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := raftstore.Open(file, raftstore.DefaultConfig())
	if err == nil || !bytes.Contains([]byte(err.Error()), []byte(file)) {
		t.Fatalf("Open(a file) = %v, want an error naming it", err)
	}
}
