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
	rows, err := rebuildRows(4000)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 25 || rows[0].value < 4000 {
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
	first, err := scratchRows(4000, keep, "scratch")
	if err != nil {
		t.Fatal(err)
	}
	online, err := scratchRows(4000, keep, "online")
	if err != nil {
		t.Fatal(err)
	}
	again, err := scratchRows(1, keep, "scratch") // the kept history, not one of 1 event
	if err != nil {
		t.Fatal(err)
	}
	if len(first) != 4 || len(online) != 5 || len(again) != 4 || first[0].value < 4000 || again[0].value != first[0].value {
		t.Fatalf("first %+v, online %+v, again %+v", first, online, again)
	}
}
