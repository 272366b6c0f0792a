package raftstore

import (
	"math/rand/v2"
	"testing"

	"github.com/hashicorp/raft"
)

// TestBoundsCacheMatchesDisk runs random StoreLogs and DeleteRange calls, with
// gaps, overwrites and stores below the first index, and checks after each
// that the cached FirstIndex and LastIndex equal the bounds read from Pebble
// and those of a simple reference set.
func TestBoundsCacheMatchesDisk(t *testing.T) {
	s, err := Open(t.TempDir(), Config{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ref := map[uint64]bool{}
	rng := rand.New(rand.NewPCG(1, 2))
	for step := range 2000 {
		lo := rng.Uint64N(300) + 1
		hi := lo + rng.Uint64N(20)
		op := "store"
		if rng.IntN(3) == 0 {
			op = "delete"
			if err := s.DeleteRange(lo, hi); err != nil {
				t.Fatal(err)
			}
			for i := lo; i <= hi; i++ {
				delete(ref, i)
			}
		} else {
			var logs []*raft.Log
			for i := lo; i <= hi; i++ {
				logs = append(logs, &raft.Log{Index: i, Term: uint64(step)})
				ref[i] = true
			}
			if err := s.StoreLogs(logs); err != nil {
				t.Fatal(err)
			}
		}
		var wantFirst, wantLast uint64
		for i := range ref {
			if wantFirst == 0 || i < wantFirst {
				wantFirst = i
			}
			wantLast = max(wantLast, i)
		}
		diskFirst, diskLast, err := s.readBounds()
		if err != nil {
			t.Fatal(err)
		}
		first, _ := s.FirstIndex()
		last, _ := s.LastIndex()
		if first != wantFirst || last != wantLast || diskFirst != wantFirst || diskLast != wantLast {
			t.Fatalf("step %d, %s [%d, %d]: cached %d, %d; on disk %d, %d; want %d, %d",
				step, op, lo, hi, first, last, diskFirst, diskLast, wantFirst, wantLast)
		}
	}
}
