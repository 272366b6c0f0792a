package redo_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/ordoplane/ordo/storage/redo"
)

func batch(from, to uint64) []byte { return []byte(fmt.Sprintf("batch %d-%d", from, to)) }

func appendChain(t *testing.T, l *redo.Log, bounds ...uint64) {
	t.Helper()
	for i := 1; i < len(bounds); i++ {
		if err := l.Append(redo.Record{From: bounds[i-1], To: bounds[i], Batch: batch(bounds[i-1], bounds[i])}); err != nil {
			t.Fatal(err)
		}
	}
}

func readAll(t *testing.T, l *redo.Log, from, to uint64) (uint64, []string) {
	t.Helper()
	var got []string
	reached, err := l.Read(from, to, func(r redo.Record) error {
		if !bytes.Equal(r.Batch, batch(r.From, r.To)) {
			t.Fatalf("record %d-%d holds %q", r.From, r.To, r.Batch)
		}
		got = append(got, fmt.Sprintf("%d-%d", r.From, r.To))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return reached, got
}

// TestChain: a read follows the records from where it starts, each
// starting where the last ended, and stops before one that passes its
// bound or where none starts.
func TestChain(t *testing.T) {
	l, err := redo.Open(t.TempDir(), "v1", 64)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	appendChain(t, l, 0, 3, 7, 10, 20)
	appendChain(t, l, 25, 30) // a gap: 20 → 25 never recorded

	for _, c := range []struct {
		from, to, reach uint64
		n               int
	}{
		{0, 20, 20, 4}, {0, 15, 10, 3}, {3, 9, 7, 1}, {4, 100, 4, 0}, {0, 100, 20, 4}, {25, 30, 30, 1},
	} {
		reach, n := l.Reach(c.from, c.to)
		if reach != c.reach || n != c.n {
			t.Errorf("Reach(%d, %d) = %d, %d; want %d, %d", c.from, c.to, reach, n, c.reach, c.n)
		}
		got, recs := readAll(t, l, c.from, c.to)
		if got != c.reach || len(recs) != c.n {
			t.Errorf("Read(%d, %d) reached %d with %v; want %d with %d records", c.from, c.to, got, recs, c.reach, c.n)
		}
	}
	if lo, hi := l.Span(); lo != 0 || hi != 30 {
		t.Errorf("Span = %d, %d; want 0, 30", lo, hi)
	}
}

// TestReopen: records survive a reopen; a record a crash cut short is
// dropped with what follows it, the rest kept; segments of another tag
// are removed.
func TestReopen(t *testing.T) {
	dir := t.TempDir()
	l, err := redo.Open(dir, "v1", 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	appendChain(t, l, 0, 5, 9, 12)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	segs, _ := filepath.Glob(filepath.Join(dir, "*.redo"))
	if len(segs) != 1 {
		t.Fatalf("%d segments, want 1", len(segs))
	}
	// Cut the last record short.
	fi, _ := os.Stat(segs[0])
	if err := os.Truncate(segs[0], fi.Size()-3); err != nil {
		t.Fatal(err)
	}
	l, err = redo.Open(dir, "v1", 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if reach, recs := readAll(t, l, 0, 100); reach != 9 || len(recs) != 2 {
		t.Fatalf("after a torn record: reached %d with %v; want 9 with 2", reach, recs)
	}
	// Appends go on, in a new segment, and chain on.
	appendChain(t, l, 9, 15)
	if reach, _ := readAll(t, l, 0, 100); reach != 15 {
		t.Fatalf("reached %d after appending, want 15", reach)
	}
	l.Close()

	l, err = redo.Open(dir, "v2", 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if reach, n := l.Reach(0, 100); reach != 0 || n != 0 {
		t.Fatalf("a log of another tag reached %d with %d records", reach, n)
	}
	if segs, _ := filepath.Glob(filepath.Join(dir, "*.redo")); len(segs) != 0 {
		t.Fatalf("segments of another tag kept: %v", segs)
	}
}

// TestPruneBelow removes whole segments ending at or below the index,
// never the one appended to, and reads stop where the pruned part began.
func TestPruneBelow(t *testing.T) {
	dir := t.TempDir()
	l, err := redo.Open(dir, "v1", 40) // a segment per record or two
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	appendChain(t, l, 0, 10, 20, 30, 40, 50)
	before := l.Bytes()
	n, err := l.PruneBelow(25)
	if err != nil || n == 0 {
		t.Fatalf("PruneBelow = %d, %v", n, err)
	}
	if l.Bytes() >= before {
		t.Errorf("bytes %d after pruning, %d before", l.Bytes(), before)
	}
	if reach, _ := l.Reach(0, 100); reach != 0 {
		t.Errorf("a pruned chain still reached %d", reach)
	}
	if reach, _ := readAll(t, l, 30, 100); reach != 50 {
		t.Errorf("from 30 reached %d, want 50", reach)
	}
	if _, err := l.PruneBelow(1000); err != nil {
		t.Fatal(err)
	}
	if reach, _ := readAll(t, l, 40, 100); reach != 50 {
		t.Errorf("the segment appended to was pruned: from 40 reached %d", reach)
	}
}
