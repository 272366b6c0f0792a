package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestWriteFiguresMerges: a run replaces the rows it measured and keeps
// the others, with the day each was measured.
func TestWriteFiguresMerges(t *testing.T) {
	path := filepath.Join(t.TempDir(), "benchmarks.md")
	day1 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	if err := writeFigures(path, []row{{"writes, 1 server", 100, "writes/s"}, {"reads | odd", 5, "reads/s"}}, day1); err != nil {
		t.Fatal(err)
	}
	day2 := day1.AddDate(0, 0, 5)
	if err := writeFigures(path, []row{{"writes, 1 server", 250.25, "writes/s"}, {"chaos: faults", 24, "faults"}}, day2); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	got := string(b)
	for _, want := range []string{
		"| chaos: faults | 24.0 | faults | 2026-12-06 |",
		"| reads / odd | 5.0 | reads/s | 2026-12-01 |",
		"| writes, 1 server | 250.2 | writes/s | 2026-12-06 |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("page lacks %q:\n%s", want, got)
		}
	}
	if strings.Count(got, "writes, 1 server") != 1 {
		t.Errorf("a re-measured figure appears twice:\n%s", got)
	}
}
