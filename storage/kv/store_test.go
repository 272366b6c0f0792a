package kv_test

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/ordoplane/ordo/storage/kv"
	"github.com/ordoplane/ordo/storage/storagetest"
)

func open(t testing.TB) *kv.Store { return storagetest.OpenKV(t) }

// set commits key=value pairs given as alternating strings.
func set(t testing.TB, s *kv.Store, kvs ...string) {
	t.Helper()
	b := s.Batch()
	for i := 0; i < len(kvs); i += 2 {
		if err := b.Set([]byte(kvs[i]), []byte(kvs[i+1])); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
}

func del(t testing.TB, s *kv.Store, keys ...string) {
	t.Helper()
	b := s.Batch()
	for _, k := range keys {
		if err := b.Delete([]byte(k)); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
}

// scanAll renders every pair Scan yields as "k=v" strings.
func scanAll(t testing.TB, r kv.Reader, lower, upper []byte, reverse bool) []string {
	t.Helper()
	var out []string
	err := r.Scan(lower, upper, reverse, func(k, v []byte) error {
		out = append(out, string(k)+"="+string(v))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func wantGet(t testing.TB, r kv.Reader, key, want string) {
	t.Helper()
	got, err := r.Get([]byte(key))
	if err != nil {
		t.Fatalf("Get(%q): %v, want %q", key, err, want)
	}
	if string(got) != want {
		t.Fatalf("Get(%q) = %q, want %q", key, got, want)
	}
}

func wantMissing(t testing.TB, r kv.Reader, key string) {
	t.Helper()
	got, err := r.Get([]byte(key))
	if !errors.Is(err, kv.ErrNotFound) {
		t.Fatalf("Get(%q) = %q, %v; want ErrNotFound", key, got, err)
	}
	if got != nil {
		t.Fatalf("Get(%q) returned %q with ErrNotFound", key, got)
	}
}

func TestGetSetDelete(t *testing.T) {
	s := open(t)
	wantMissing(t, s, "a")
	set(t, s, "a", "1", "b", "")
	wantGet(t, s, "a", "1")
	// An empty value is a present key, not a missing one.
	wantGet(t, s, "b", "")
	set(t, s, "a", "2")
	wantGet(t, s, "a", "2")
	del(t, s, "a", "never-written")
	wantMissing(t, s, "a")
	wantMissing(t, s, "never-written")
	wantGet(t, s, "b", "")
}

func TestGetReturnsACopy(t *testing.T) {
	s := open(t)
	set(t, s, "k", "value")
	got, err := s.Get([]byte("k"))
	if err != nil {
		t.Fatal(err)
	}
	copy(got, "XXXXX")
	wantGet(t, s, "k", "value")

	b := s.Batch()
	defer b.Close()
	b.Set([]byte("own"), []byte("batch"))
	for _, key := range []string{"k", "own"} {
		got, err := b.Get([]byte(key))
		if err != nil {
			t.Fatal(err)
		}
		copy(got, "XXXXX")
	}
	wantGet(t, b, "k", "value")
	wantGet(t, b, "own", "batch")

	// The batch keeps its own copy of what it was given.
	val := []byte("mutable")
	b.Set([]byte("m"), val)
	copy(val, "XXXXXXX")
	wantGet(t, b, "m", "mutable")
}

func TestScan(t *testing.T) {
	s := open(t)
	set(t, s, "a", "1", "b", "2", "b\x00x", "3", "c", "4", "d", "5", "\xff\xff", "6")

	for _, tc := range []struct {
		name         string
		lower, upper []byte
		reverse      bool
		want         []string
	}{
		{"all", nil, nil, false, []string{"a=1", "b=2", "b\x00x=3", "c=4", "d=5", "\xff\xff=6"}},
		{"all reverse", nil, nil, true, []string{"\xff\xff=6", "d=5", "c=4", "b\x00x=3", "b=2", "a=1"}},
		{"lower inclusive upper exclusive", []byte("b"), []byte("d"), false, []string{"b=2", "b\x00x=3", "c=4"}},
		{"bounded reverse", []byte("b"), []byte("d"), true, []string{"c=4", "b\x00x=3", "b=2"}},
		{"lower only", []byte("c"), nil, false, []string{"c=4", "d=5", "\xff\xff=6"}},
		{"upper only", nil, []byte("b\x00"), false, []string{"a=1", "b=2"}},
		{"prefix", []byte("b"), kv.PrefixEnd([]byte("b")), false, []string{"b=2", "b\x00x=3"}},
		{"bounds between keys", []byte("a\x00"), []byte("a\x01"), false, nil},
		{"empty range", []byte("c"), []byte("c"), false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := scanAll(t, s, tc.lower, tc.upper, tc.reverse)
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("Scan = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestScanStop(t *testing.T) {
	s := open(t)
	set(t, s, "a", "1", "b", "2", "c", "3")
	for _, reverse := range []bool{false, true} {
		var seen []string
		err := s.Scan(nil, nil, reverse, func(k, _ []byte) error {
			seen = append(seen, string(k))
			if len(seen) == 2 {
				return kv.ErrStop
			}
			return nil
		})
		if err != nil {
			t.Fatalf("reverse=%v: ErrStop surfaced as %v", reverse, err)
		}
		want := "[a b]"
		if reverse {
			want = "[c b]"
		}
		if fmt.Sprint(seen) != want {
			t.Errorf("reverse=%v: saw %v, want %v", reverse, seen, want)
		}
	}
	// A wrapped ErrStop stops too; any other error is returned as is.
	err := s.Scan(nil, nil, false, func(k, _ []byte) error { return fmt.Errorf("done: %w", kv.ErrStop) })
	if err != nil {
		t.Errorf("wrapped ErrStop surfaced as %v", err)
	}
	boom := errors.New("boom")
	calls := 0
	err = s.Scan(nil, nil, false, func(k, _ []byte) error { calls++; return boom })
	if !errors.Is(err, boom) || calls != 1 {
		t.Errorf("Scan = %v after %d calls, want boom after 1", err, calls)
	}
}

func TestBatchReadsItsOwnWrites(t *testing.T) {
	s := open(t)
	set(t, s, "keep", "0", "gone", "0", "over", "0")

	b := s.Batch()
	defer b.Close()
	if !b.Empty() {
		t.Fatal("new batch not empty")
	}
	b.Set([]byte("new"), []byte("1"))
	b.Set([]byte("over"), []byte("1"))
	b.Delete([]byte("gone"))
	if b.Empty() {
		t.Fatal("batch with writes reports Empty")
	}

	wantGet(t, b, "new", "1")
	wantGet(t, b, "over", "1")
	wantGet(t, b, "keep", "0")
	wantMissing(t, b, "gone")
	if got, want := fmt.Sprint(scanAll(t, b, nil, nil, false)), "[keep=0 new=1 over=1]"; got != want {
		t.Errorf("batch Scan = %s, want %s", got, want)
	}
	if got, want := fmt.Sprint(scanAll(t, b, nil, nil, true)), "[over=1 new=1 keep=0]"; got != want {
		t.Errorf("batch reverse Scan = %s, want %s", got, want)
	}
	// A write after a delete, and a delete after a write, within the batch.
	b.Set([]byte("gone"), []byte("back"))
	b.Delete([]byte("new"))
	wantGet(t, b, "gone", "back")
	wantMissing(t, b, "new")

	// Nothing is visible outside the batch before Commit.
	wantMissing(t, s, "new")
	wantGet(t, s, "over", "0")
	wantGet(t, s, "gone", "0")

	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	if got, want := fmt.Sprint(scanAll(t, s, nil, nil, false)), "[gone=back keep=0 over=1]"; got != want {
		t.Errorf("after Commit: %s, want %s", got, want)
	}
}

func TestBatchCloseDiscards(t *testing.T) {
	s := open(t)
	set(t, s, "a", "0")
	b := s.Batch()
	b.Set([]byte("a"), []byte("1"))
	b.Set([]byte("b"), []byte("1"))
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if got, want := fmt.Sprint(scanAll(t, s, nil, nil, false)), "[a=0]"; got != want {
		t.Errorf("after Close: %s, want %s", got, want)
	}
}

func TestBatchSeesLaterCommits(t *testing.T) {
	// A batch reads its own writes over the latest committed state, not a
	// snapshot taken when it was created.
	s := open(t)
	b := s.Batch()
	defer b.Close()
	set(t, s, "later", "1")
	wantGet(t, b, "later", "1")
}

func TestSnapshotIsolation(t *testing.T) {
	s := open(t)
	set(t, s, "a", "1", "b", "1", "c", "1")
	snap := s.Snapshot()
	defer snap.Close()

	set(t, s, "a", "2", "d", "2")
	del(t, s, "b")

	wantGet(t, snap, "a", "1")
	wantGet(t, snap, "b", "1")
	wantMissing(t, snap, "d")
	if got, want := fmt.Sprint(scanAll(t, snap, nil, nil, false)), "[a=1 b=1 c=1]"; got != want {
		t.Errorf("snapshot Scan = %s, want %s", got, want)
	}
	if got, want := fmt.Sprint(scanAll(t, snap, nil, nil, true)), "[c=1 b=1 a=1]"; got != want {
		t.Errorf("snapshot reverse Scan = %s, want %s", got, want)
	}
	if got, want := fmt.Sprint(scanAll(t, s, nil, nil, false)), "[a=2 c=1 d=2]"; got != want {
		t.Errorf("store Scan = %s, want %s", got, want)
	}
	// Scan values are only valid during the callback, but Get copies.
	v, _ := snap.Get([]byte("a"))
	set(t, s, "a", "3")
	if string(v) != "1" {
		t.Errorf("snapshot value changed to %q", v)
	}
}

func TestReopenKeepsFlushedState(t *testing.T) {
	dir := t.TempDir()
	s, err := kv.Open(dir, kv.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	set(t, s, "a", "1", "b", "2")
	del(t, s, "b")
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = kv.Open(dir, kv.Config{Sync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got, want := fmt.Sprint(scanAll(t, s, nil, nil, false)), "[a=1]"; got != want {
		t.Errorf("after reopen: %s, want %s", got, want)
	}
	// A Sync store commits too.
	set(t, s, "c", "3")
	wantGet(t, s, "c", "3")
}

func TestConfigValidate(t *testing.T) {
	if err := kv.DefaultConfig().Validate(); err != nil {
		t.Errorf("DefaultConfig invalid: %v", err)
	}
	if kv.DefaultConfig().CacheBytes != 64<<20 {
		t.Errorf("default cache %d, documented 64 MiB", kv.DefaultConfig().CacheBytes)
	}
	bad := kv.Config{CacheBytes: -1}
	if err := bad.Validate(); err == nil {
		t.Error("negative CacheBytes accepted")
	}
	if _, err := kv.Open(t.TempDir(), bad); err == nil {
		t.Error("Open accepted an invalid config")
	}
}

func TestKeys(t *testing.T) {
	for _, tc := range []struct{ in, want []byte }{
		{[]byte("abc"), []byte("abd")},
		{[]byte("a\xff"), []byte("b")},
		{[]byte("a\xff\xff"), []byte("b")},
		{[]byte{0x00}, []byte{0x01}},
		{[]byte{0xff}, nil},
		{[]byte{0xff, 0xff}, nil},
		{nil, nil},
	} {
		in := bytes.Clone(tc.in)
		got := kv.PrefixEnd(in)
		if !bytes.Equal(got, tc.want) || (got == nil) != (tc.want == nil) {
			t.Errorf("PrefixEnd(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if !bytes.Equal(in, tc.in) {
			t.Errorf("PrefixEnd modified its argument %q to %q", tc.in, in)
		}
	}

	if got := kv.Key("t", "jobs", "web"); string(got) != "t\x00jobs\x00web" {
		t.Errorf("Key = %q", got)
	}
	if got := kv.Key("only"); string(got) != "only" {
		t.Errorf("Key(one part) = %q", got)
	}
	if got := kv.Key(); len(got) != 0 {
		t.Errorf("Key() = %q", got)
	}

	// Uint64 keys sort numerically.
	prev := kv.Uint64([]byte("p/"), 0)
	for _, v := range []uint64{1, 255, 256, 1 << 32, 1<<64 - 1} {
		k := kv.Uint64([]byte("p/"), v)
		if bytes.Compare(prev, k) >= 0 {
			t.Errorf("Uint64 key of %d does not sort after the previous one", v)
		}
		if got := kv.ParseUint64(kv.Uint64Value(v)); got != v {
			t.Errorf("ParseUint64(Uint64Value(%d)) = %d", v, got)
		}
		prev = k
	}
	if got := kv.ParseUint64([]byte{1, 2, 3}); got != 0 {
		t.Errorf("ParseUint64(short) = %d, want 0", got)
	}
}

// TestDisableCompactions: a store opened with DisableCompactions keeps
// every table its flushes wrote in level 0, past the threshold at which
// Pebble would compact them (4 files), through Close and a reopen.
func TestDisableCompactions(t *testing.T) {
	dir := t.TempDir()
	cfg := kv.Config{CacheBytes: 1 << 20, DisableCompactions: true}
	s, err := kv.Open(dir, cfg)
	if err != nil {
		t.Fatal(err)
	}
	const flushes = 8
	for i := range flushes {
		b := s.Batch()
		// Each flush spans the same keys: its table overlaps the others
		// (another level 0 sublevel), which is what Pebble compacts.
		for _, k := range []string{"a", "z"} {
			if err := b.Set([]byte(k), []byte{byte(i)}); err != nil {
				t.Fatal(err)
			}
		}
		if err := b.Commit(); err != nil {
			t.Fatal(err)
		}
		if err := s.FlushMemtable(); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = kv.Open(dir, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if h := s.Health(); h.L0Files != flushes {
		t.Fatalf("level 0 holds %d files, want the %d flushes: something compacted them", h.L0Files, flushes)
	}
}
