package archive_test

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/ordoplane/ordo/storage/archive"
	"github.com/ordoplane/ordo/storage/kv"
	"github.com/ordoplane/ordo/storage/storagetest"
)

func open(t testing.TB) *kv.Store { return storagetest.OpenKV(t) }

type pos struct {
	index uint64
	seq   uint32
}

func (p pos) String() string { return fmt.Sprintf("%d/%d", p.index, p.seq) }

func data(p pos) []byte { return fmt.Appendf(nil, "event %d/%d", p.index, p.seq) }

// appendAll appends events at ps in one batch, in the order given, and
// records the counters as the FSM does.
func appendAll(t testing.TB, s *kv.Store, ps ...pos) {
	t.Helper()
	n, err := archive.Len(s)
	if err != nil {
		t.Fatal(err)
	}
	b := s.Batch()
	for _, p := range ps {
		if err := archive.Append(b, p.index, p.seq, data(p)); err != nil {
			t.Fatal(err)
		}
	}
	if err := archive.SetCounters(b, n+uint64(len(ps)), ps[len(ps)-1].index); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
}

func scan(t testing.TB, r kv.Reader, from, to uint64) []pos {
	t.Helper()
	var out []pos
	err := archive.Scan(r, from, to, func(index uint64, seq uint32, d []byte) error {
		p := pos{index, seq}
		if !bytes.Equal(d, data(p)) {
			t.Errorf("%v holds %q", p, d)
		}
		out = append(out, p)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestScanOrder(t *testing.T) {
	s := open(t)
	// Appended out of order across batches; numbers whose decimal or
	// little-endian order differs from numeric order.
	appendAll(t, s, pos{256, 0}, pos{2, 1}, pos{2, 0})
	appendAll(t, s, pos{1, 256}, pos{1, 2}, pos{1, 0}, pos{10, 0})
	appendAll(t, s, pos{1 << 32, 0}, pos{math.MaxUint64, math.MaxUint32}, pos{3, 1 << 24})

	want := []pos{{1, 0}, {1, 2}, {1, 256}, {2, 0}, {2, 1}, {3, 1 << 24}, {10, 0}, {256, 0}, {1 << 32, 0}, {math.MaxUint64, math.MaxUint32}}
	if got := scan(t, s, 0, 0); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("Scan = %v, want %v", got, want)
	}
	if got := scan(t, s, 1, math.MaxUint64); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("Scan(1, max) = %v, want %v", got, want)
	}
}

func TestScanBounds(t *testing.T) {
	s := open(t)
	for i := uint64(1); i <= 5; i++ {
		appendAll(t, s, pos{i, 0}, pos{i, 1})
	}
	for _, tc := range []struct {
		from, to uint64
		want     string
	}{
		{0, 0, "[1/0 1/1 2/0 2/1 3/0 3/1 4/0 4/1 5/0 5/1]"},
		{3, 0, "[3/0 3/1 4/0 4/1 5/0 5/1]"},
		{2, 3, "[2/0 2/1 3/0 3/1]"}, // both ends inclusive, every seq of to
		{4, 4, "[4/0 4/1]"},
		{0, 1, "[1/0 1/1]"},
		{5, 9, "[5/0 5/1]"},
		{6, 0, "[]"},
		{6, 10, "[]"},
		{4, 3, "[]"},
	} {
		if got := fmt.Sprint(scan(t, s, tc.from, tc.to)); got != tc.want {
			t.Errorf("Scan(%d, %d) = %s, want %s", tc.from, tc.to, got, tc.want)
		}
	}
}

func TestScanStopAndErrors(t *testing.T) {
	s := open(t)
	appendAll(t, s, pos{1, 0}, pos{2, 0}, pos{3, 0})
	var seen []uint64
	err := archive.Scan(s, 0, 0, func(index uint64, _ uint32, _ []byte) error {
		seen = append(seen, index)
		if index == 2 {
			return kv.ErrStop
		}
		return nil
	})
	if err != nil || fmt.Sprint(seen) != "[1 2]" {
		t.Fatalf("Scan with ErrStop at 2 = %v, saw %v", err, seen)
	}
	boom := errors.New("boom")
	if err := archive.Scan(s, 0, 0, func(uint64, uint32, []byte) error { return boom }); !errors.Is(err, boom) {
		t.Fatalf("Scan returned %v, want boom", err)
	}

	// A key under the archive prefix that is not index+seq is corruption.
	b := s.Batch()
	b.Set([]byte("log/short"), []byte("x"))
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := archive.Scan(s, 0, 0, func(uint64, uint32, []byte) error { return nil }); err == nil {
		t.Fatal("Scan accepted a malformed archive key")
	}
}

func TestScanIgnoresOtherKeys(t *testing.T) {
	s := open(t)
	b := s.Batch()
	for _, k := range []string{"log", "log.", "lof/zzzzzzzzzzzz", "meta/x", "t/namespaces\x00a"} {
		b.Set([]byte(k), []byte("other"))
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	appendAll(t, s, pos{7, 0})
	if got := fmt.Sprint(scan(t, s, 0, 0)); got != "[7/0]" {
		t.Fatalf("Scan = %s, want [7/0]", got)
	}
}

func TestLenLast(t *testing.T) {
	s := open(t)
	for name, f := range map[string]func(kv.Reader) (uint64, error){"Len": archive.Len, "Last": archive.Last, "First": archive.First} {
		if n, err := f(s); n != 0 || err != nil {
			t.Errorf("%s of an empty archive = %d, %v", name, n, err)
		}
	}
	appendAll(t, s, pos{3, 0}, pos{3, 1}, pos{3, 2})
	appendAll(t, s, pos{9, 0})
	n, err := archive.Len(s)
	if err != nil || n != 4 {
		t.Errorf("Len = %d, %v; want 4", n, err)
	}
	last, err := archive.Last(s)
	if err != nil || last != 9 {
		t.Errorf("Last = %d, %v; want 9", last, err)
	}
	if first, err := archive.First(s); err != nil || first != 3 {
		t.Errorf("First = %d, %v; want 3", first, err)
	}
	// The counters are read through any reader, a batch included.
	b := s.Batch()
	defer b.Close()
	if err := archive.Append(b, 10, 0, []byte("e")); err != nil {
		t.Fatal(err)
	}
	if err := archive.SetCounters(b, 5, 10); err != nil {
		t.Fatal(err)
	}
	if n, _ := archive.Len(b); n != 5 {
		t.Errorf("Len in batch = %d, want 5", n)
	}
	if n, _ := archive.Len(s); n != 4 {
		t.Errorf("Len outside the uncommitted batch = %d, want 4", n)
	}
}

func TestKeyLayout(t *testing.T) {
	k := archive.Key(0x0102030405060708, 0x0a0b0c0d)
	want := []byte("log/\x01\x02\x03\x04\x05\x06\x07\x08\x0a\x0b\x0c\x0d")
	if !bytes.Equal(k, want) {
		t.Fatalf("Key = %q, want %q", k, want)
	}
	if bytes.Compare(archive.Key(1, math.MaxUint32), archive.Key(2, 0)) >= 0 {
		t.Fatal("the last seq of index 1 sorts after index 2")
	}
}
