package main

import (
	"strings"
	"testing"
	"time"
)

// rowsEvents is the size of the histories the rebuild and time-travel
// row tests generate: the 500 node registrations every generated history
// starts with, then namespaces, jobs, evals and allocations. The tests
// check the figures are made and make sense, not what they measure; at
// 1,500 events these rows cost twice the CPU (under -race) for the same
// checks.
const rowsEvents = 600

// TestRebuildRows runs the rebuild figures on a small history.
func TestRebuildRows(t *testing.T) {
	defer func(d time.Duration) { rebuildWriteBaseline = d }(rebuildWriteBaseline)
	rebuildWriteBaseline = 300 * time.Millisecond
	defer func(n int) { rebuildRuns = n }(rebuildRuns)
	rebuildRuns = 1 // TestScratchRows times several
	rows, err := rebuildRows(rowsEvents)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 27 || rows[0].value < rowsEvents {
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
	first, err := scratchRows(rowsEvents, keep, "scratch")
	if err != nil {
		t.Fatal(err)
	}
	online, err := scratchRows(rowsEvents, keep, "online")
	if err != nil {
		t.Fatal(err)
	}
	defer func(n int) { rebuildRuns = n }(rebuildRuns)
	// One run: first timed several; this checks the history is the kept
	// one, not one of 1 event.
	rebuildRuns = 1
	again, err := scratchRows(1, keep, "scratch")
	if err != nil {
		t.Fatal(err)
	}
	if len(first) != 6 || len(online) != 5 || len(again) != 6 || first[0].value < rowsEvents || again[0].value != first[0].value {
		t.Fatalf("first %+v, online %+v, again %+v", first, online, again)
	}
	// The rate is the median of rebuildRuns runs, between the fastest and
	// the slowest.
	if median, fast, slow := first[1].value, first[2].value, first[3].value; slow > median || median > fast {
		t.Errorf("median %.0f, fastest %.0f, slowest %.0f events/s", median, fast, slow)
	}
}
