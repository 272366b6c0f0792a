package main

import "testing"

// TestTimeTravelRows runs the time-travel figures on a small history.
func TestTimeTravelRows(t *testing.T) {
	rows, err := timeTravelRows(rowsEvents, "", 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 13 || rows[0].value < rowsEvents {
		t.Fatalf("rows: %+v", rows)
	}
	for _, r := range rows {
		if r.value <= 0 {
			t.Errorf("%s: %v %s", r.figure, r.value, r.unit)
		}
	}
}
