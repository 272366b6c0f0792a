package main

import (
	"strings"
	"testing"
	"time"
)

// TestRebuildRows runs the rebuild figures on a small history.
func TestRebuildRows(t *testing.T) {
	defer func(d time.Duration) { rebuildWriteBaseline = d }(rebuildWriteBaseline)
	rebuildWriteBaseline = time.Second
	defer func(n int) { rebuildRuns = n }(rebuildRuns)
	rebuildRuns = 1 // TestScratchRows times several
	rows, err := rebuildRows(1500)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 27 || rows[0].value < 1500 {
		t.Fatalf("rows: %+v", rows)
	}
	for _, r := range rows {
		if r.value <= 0 && r.unit != "stalls" && !strings.Contains(r.figure, "held writes") {
			t.Errorf("%s: %v %s", r.figure, r.value, r.unit)
		}
	}
}

// TestScratchRows: rebuild-scratch and rebuild-online keep the history
// they generate and reuse it (rebuild-writes runs TestRebuildRows' part).
func TestScratchRows(t *testing.T) {
	keep := t.TempDir() + "/src"
	first, err := scratchRows(1500, keep, "scratch")
	if err != nil {
		t.Fatal(err)
	}
	online, err := scratchRows(1500, keep, "online")
	if err != nil {
		t.Fatal(err)
	}
	again, err := scratchRows(1, keep, "scratch") // the kept history, not one of 1 event
	if err != nil {
		t.Fatal(err)
	}
	if len(first) != 6 || len(online) != 5 || len(again) != 6 || first[0].value < 1500 || again[0].value != first[0].value {
		t.Fatalf("first %+v, online %+v, again %+v", first, online, again)
	}
	// The rate is the median of rebuildRuns runs, between the fastest and
	// the slowest.
	if median, fast, slow := first[1].value, first[2].value, first[3].value; slow > median || median > fast {
		t.Errorf("median %.0f, fastest %.0f, slowest %.0f events/s", median, fast, slow)
	}
}
