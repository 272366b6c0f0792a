package main

import "testing"

// TestCSIRows runs the csi figures small, so they keep working.
func TestCSIRows(t *testing.T) {
	rows, err := csiRows(50)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 5 || rows[1].value <= 0 || rows[2].value <= 0 {
		t.Fatalf("rows %+v", rows)
	}
}
