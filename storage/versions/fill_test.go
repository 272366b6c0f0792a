package versions

import (
	"errors"
	"testing"
)

// seedAndAppend seeds s from src's state now and appends n batches of
// entries entries each.
func seedAndAppend(t *testing.T, s *Store, src *source, n, entries int) {
	t.Helper()
	snap := src.store.Snapshot()
	_, err := s.Seed(snap, src.index, "v1", keep)
	snap.Close()
	if err != nil {
		t.Fatal(err)
	}
	for range n {
		if err := s.Append(src.batch(entries), keep); err != nil {
			t.Fatal(err)
		}
	}
}

// TestFillHiddenUntilEnd: a store seeded late (at index at, over nothing)
// is filled below with the batches that led to it. While the fill runs,
// reads at and after the seed still see the seed's rows only (the fill's
// versions of keys gone by then must not show), and indexes below it are
// not covered; once ended, one span answers every index right.
func TestFillHiddenUntilEnd(t *testing.T) {
	src := newSource(t)
	var recs []Record
	for range 30 {
		recs = append(recs, src.batch(1+src.rng.IntN(4)))
	}
	at := src.index
	s := openStore(t)
	seedAndAppend(t, s, src, 10, 2)
	if err := s.BeginFill(1, at-1, "v1"); err != nil {
		t.Fatal(err)
	}
	if err := s.BeginFill(1, at-1, "v1"); err == nil {
		t.Fatal("a second fill began beside the first")
	}
	if _, err := s.Prune(at); err == nil {
		t.Fatal("a prune ran during a fill")
	}
	for i, rec := range recs {
		if err := s.FillBatch(rec, keep); err != nil {
			t.Fatal(err)
		}
		if i == len(recs)/2 || i == len(recs)-1 {
			for j := at; j <= src.index; j++ {
				check(t, s, src.model, j)
			}
			if s.Covers(at-1, "v1") {
				t.Fatal("an index being filled is covered")
			}
		}
	}
	if err := s.EndFill(); err != nil {
		t.Fatal(err)
	}
	if spans := s.Spans(); len(spans) != 1 || spans[0].From != 1 || spans[0].To != src.index {
		t.Fatalf("spans after the fill: %+v", spans)
	}
	for j := uint64(1); j <= src.index; j++ {
		check(t, s, src.model, j)
	}
}

// TestFillGap: a gap between two spans is filled from the state at its
// start; its versions join the two spans into one, and a batch outside
// the fill's range is refused.
func TestFillGap(t *testing.T) {
	src := newSource(t)
	s := openStore(t)
	seedAndAppend(t, s, src, 10, 3)
	end := src.index
	var lost []Record
	for range 8 {
		lost = append(lost, src.batch(3))
	}
	seeded := src.index
	seedAndAppend(t, s, src, 5, 2)
	if err := s.BeginFill(end+1, seeded-1, "v1"); err != nil {
		t.Fatal(err)
	}
	if err := s.FillBatch(Record{From: seeded, To: seeded + 1, Tag: "v1"}, keep); !errors.Is(err, ErrNoFill) {
		t.Fatalf("a batch past the fill: %v", err)
	}
	for _, rec := range lost {
		if err := s.FillBatch(rec, keep); err != nil {
			t.Fatal(err)
		}
		check(t, s, src.model, seeded)
		check(t, s, src.model, end)
	}
	if err := s.EndFill(); err != nil {
		t.Fatal(err)
	}
	if spans := s.Spans(); len(spans) != 1 || spans[0].From != 0 || spans[0].To != src.index {
		t.Fatalf("spans after the fill: %+v", spans)
	}
	for j := uint64(0); j <= src.index; j++ {
		check(t, s, src.model, j)
	}
}

// TestFillAbortAndWipe: an aborted fill leaves the store answering as
// before it began (its versions gone, reopened or not); a wipe leaves it
// empty.
func TestFillAbortAndWipe(t *testing.T) {
	src := newSource(t)
	var recs []Record
	for range 10 {
		recs = append(recs, src.batch(3))
	}
	at := src.index
	dir := t.TempDir()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Seed(src.store.Snapshot(), at, "v1", keep); err != nil {
		t.Fatal(err)
	}
	if err := s.BeginFill(1, at-1, "v1"); err != nil {
		t.Fatal(err)
	}
	for _, rec := range recs[:5] {
		if err := s.FillBatch(rec, keep); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	if s, err = Open(dir); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if f := s.Filling(); f == nil || f.From != 1 || f.To != at-1 {
		t.Fatalf("fill after a reopen: %+v", f)
	}
	check(t, s, src.model, at)
	if err := s.AbortFill(); err != nil {
		t.Fatal(err)
	}
	if s.Filling() != nil {
		t.Fatal("fill still under way after its abort")
	}
	check(t, s, src.model, at)
	// The fill can begin again from nothing and end right.
	if err := s.BeginFill(1, at-1, "v1"); err != nil {
		t.Fatal(err)
	}
	for _, rec := range recs {
		if err := s.FillBatch(rec, keep); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.EndFill(); err != nil {
		t.Fatal(err)
	}
	for j := uint64(1); j <= at; j++ {
		check(t, s, src.model, j)
	}
	if err := s.Wipe(); err != nil {
		t.Fatal(err)
	}
	if len(s.Spans()) != 0 || s.Covers(at, "v1") {
		t.Fatalf("spans after a wipe: %+v", s.Spans())
	}
	if _, err := s.Seed(src.store.Snapshot(), at, "v1", keep); err != nil {
		t.Fatal(err)
	}
	check(t, s, src.model, at)
}
