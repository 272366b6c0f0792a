package main

import (
	"strings"
	"testing"
)

// TestHistoryLatency runs the history figures on a small history: six
// rows, every latency positive.
func TestHistoryLatency(t *testing.T) {
	rows, err := historyLatency(1020, 20)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 6 {
		t.Fatalf("%d rows: %v", len(rows), rows)
	}
	for _, r := range rows {
		if r.value <= 0 || r.unit != "ms" || !strings.Contains(r.figure, "20-event entity") {
			t.Errorf("row %+v", r)
		}
	}
}
