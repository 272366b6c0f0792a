package main

import (
	"runtime/debug"
	"testing"

	"github.com/ordoplane/ordo/projections/rebuild"
)

// TestBatchGC: a replaying command collects at ReplayGCPercent, unless
// GOGC chose otherwise.
func TestBatchGC(t *testing.T) {
	before := debug.SetGCPercent(100)
	defer debug.SetGCPercent(before)

	t.Setenv("GOGC", "")
	batchGC()
	if got := debug.SetGCPercent(100); got != rebuild.ReplayGCPercent {
		t.Fatalf("GC percent %d, want %d", got, rebuild.ReplayGCPercent)
	}
	t.Setenv("GOGC", "150")
	batchGC()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Fatalf("GC percent %d with GOGC set: the user's choice must win", got)
	}
}
