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
