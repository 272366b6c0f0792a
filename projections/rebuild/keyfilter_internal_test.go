package rebuild

import (
	"hash/maphash"
	"strconv"
	"testing"
)

// TestKeyFilter: every hash added is found, across the filters the set
// grows through, and few absent ones are (each such is a store read a
// rebuild could have spared).
func TestKeyFilter(t *testing.T) {
	seed := maphash.MakeSeed()
	hash := func(prefix string, i int) uint64 { return maphash.String(seed, prefix+strconv.Itoa(i)) }
	var f keyFilter
	const n = 3 * filterFirst // three filters
	in := make([]uint64, n)
	for i := range in {
		in[i] = hash("in/", i)
		f.add(in[i])
	}
	if f.len() != n || len(f.levels) < 2 {
		t.Fatalf("%d hashes in %d filters, want %d in two or more", f.len(), len(f.levels), n)
	}
	for i, h := range in {
		if !f.mayHave(h) {
			t.Fatalf("hash %d added, not found", i)
		}
	}
	var hits int
	const absent = 50_000
	for i := range absent {
		if f.mayHave(hash("out/", i)) {
			hits++
		}
	}
	// Each filter holds at most its capacity, at about 1% false hits;
	// the set asks each.
	t.Logf("%.3f%% false hits over %d filters", 100*float64(hits)/absent, len(f.levels))
	if rate := float64(hits) / absent; rate > 0.01*float64(len(f.levels)) {
		t.Errorf("%.2f%% of absent hashes found, over %d%%", 100*rate, len(f.levels))
	}
	var empty keyFilter
	if empty.mayHave(hash("in/", 0)) {
		t.Error("an empty filter found a hash")
	}
}
