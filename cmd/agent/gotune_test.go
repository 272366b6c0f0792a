package agent

import (
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"
)

// TestTuneGC: a server collects at ServerGCPercent with a soft memory
// limit of half the machine's memory, unless $GOGC and $GOMEMLIMIT chose
// otherwise.
func TestTuneGC(t *testing.T) {
	beforePercent := debug.SetGCPercent(100)
	beforeLimit := debug.SetMemoryLimit(math.MaxInt64)
	defer func() {
		debug.SetGCPercent(beforePercent)
		debug.SetMemoryLimit(beforeLimit)
	}()
	proc := t.TempDir()
	if err := os.WriteFile(filepath.Join(proc, "meminfo"), []byte("MemTotal:        8000000 kB\nMemFree: 1 kB\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	percent, limit := TuneGC(proc)
	if percent != ServerGCPercent || limit != 4000000<<10 {
		t.Fatalf("TuneGC = %d, %d; want %d, %d", percent, limit, ServerGCPercent, 4000000<<10)
	}
	if got := debug.SetGCPercent(100); got != ServerGCPercent {
		t.Fatalf("GC percent %d, want %d", got, ServerGCPercent)
	}
	if got := debug.SetMemoryLimit(math.MaxInt64); got != 4000000<<10 {
		t.Fatalf("memory limit %d, want %d", got, 4000000<<10)
	}

	t.Setenv("GOGC", "150")
	t.Setenv("GOMEMLIMIT", "1GiB")
	if percent, limit := TuneGC(proc); percent != 0 || limit != 0 {
		t.Fatalf("TuneGC with GOGC and GOMEMLIMIT set = %d, %d; want both left alone", percent, limit)
	}
	if got := debug.SetGCPercent(100); got != 100 {
		t.Fatalf("GC percent %d with GOGC set: the operator's choice must win", got)
	}
	if got := debug.SetMemoryLimit(math.MaxInt64); got != math.MaxInt64 {
		t.Fatalf("memory limit %d with GOMEMLIMIT set: the operator's choice must win", got)
	}

	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	if _, limit := TuneGC(t.TempDir()); limit != 0 {
		t.Fatalf("limit %d without a meminfo, want none", limit)
	}
}
