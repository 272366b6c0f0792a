package main

import (
	"runtime/debug"
	"testing"
)

// TestBatchGC: a replaying command collects at batchGCPercent, unless
// GOGC chose otherwise.
func TestBatchGC(t *testing.T) {
	before := debug.SetGCPercent(100)
	defer debug.SetGCPercent(before)

	t.Setenv("GOGC", "")
	batchGC()
	if got := debug.SetGCPercent(100); got != batchGCPercent {
		t.Fatalf("GC percent %d, want %d", got, batchGCPercent)
	}
	t.Setenv("GOGC", "150")
	batchGC()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Fatalf("GC percent %d with GOGC set: the user's choice must win", got)
	}
}
