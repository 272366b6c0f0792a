package mirror

import (
	"testing"

	"github.com/ordoplane/ordo/storage/archive"
)

// TestPendingAfter: the count of events after a resume point, taken from
// either side, is the count of every archived event after it.
func TestPendingAfter(t *testing.T) {
	l := newLog(t)
	if length, pending, err := pendingAfter(l.store, Position{}); err != nil || length != 0 || pending != 0 {
		t.Fatalf("empty archive: %d, %d, %v", length, pending, err)
	}
	for i := range 40 {
		l.namespaces(1, 1+i%4, 9)
	}
	var all []Position
	if err := archive.Scan(l.store, 0, 0, func(index uint64, seq uint32, _ []byte) error {
		all = append(all, Position{index, seq})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	resumes := append([]Position{{}, {0, 5}, {l.index + 3, 0}}, all...)
	resumes = append(resumes, Position{5, 99}, Position{30, 99})
	for _, r := range resumes {
		var want uint64
		for _, p := range all {
			if r.Less(p) {
				want++
			}
		}
		length, pending, err := pendingAfter(l.store, r)
		if err != nil || length != uint64(len(all)) || pending != want {
			t.Fatalf("resume %s: %d of %d pending (%v), want %d of %d", r, pending, length, err, want, len(all))
		}
	}
}
