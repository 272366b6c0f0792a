package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// testRun is a run on a fixed machine, so the page's header is known.
func testRun(at time.Time) benchRun {
	return benchRun{at: at, commit: "abc123", cpus: 2, cpu: "Test CPU", goVer: "go1.0", osArch: "linux/amd64"}
}

func readPage(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestWriteFiguresMerges: a run replaces the rows it measured and keeps
// the others with their value and day; no figure appears twice; the
// header names the last run.
func TestWriteFiguresMerges(t *testing.T) {
	path := filepath.Join(t.TempDir(), "benchmarks.md")
	day1 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	if err := writeFiguresRun(path, []row{{"writes, 1 server", 100, "writes/s"}, {"reads | odd", 5, "reads/s"}}, testRun(day1)); err != nil {
		t.Fatal(err)
	}
	day2 := day1.AddDate(0, 0, 5)
	run2 := testRun(day2)
	run2.commit = "def456"
	if err := writeFiguresRun(path, []row{{"writes, 1 server", 250.25, "writes/s"}, {"chaos: faults", 24, "faults"}}, run2); err != nil {
		t.Fatal(err)
	}
	got := readPage(t, path)
	for _, want := range []string{
		"| chaos: faults | 24.0 | faults | 2026-12-06 |",
		"| reads / odd | 5.0 | reads/s | 2026-12-01 |",
		"| writes, 1 server | 250.2 | writes/s | 2026-12-06 |",
		"- date: 2026-12-06 10:00 UTC\n",
		"- commit: def456\n",
		"- machine: 2 CPUs (Test CPU), go1.0, linux/amd64\n",
		"- figures measured: 2 of the 3 rows below\n",
		"`make bench`",
		"BENCHFLAGS",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("page lacks %q:\n%s", want, got)
		}
	}
	if strings.Count(got, "writes, 1 server") != 1 {
		t.Errorf("a re-measured figure appears twice:\n%s", got)
	}
	if strings.Contains(got, "abc123") {
		t.Errorf("the header still names the first run:\n%s", got)
	}
}

// TestWriteFiguresIdempotent: writing the same rows again gives the same
// page, and rewriting a page with no new rows keeps every row: the page
// is regenerated whole, never appended to.
func TestWriteFiguresIdempotent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "benchmarks.md")
	run := testRun(time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC))
	rows := []row{{"b figure", 2, "s"}, {"a figure", 1, "ms"}}
	for range 3 {
		if err := writeFiguresRun(path, rows, run); err != nil {
			t.Fatal(err)
		}
	}
	first := readPage(t, path)
	if err := writeFiguresRun(path, rows, run); err != nil {
		t.Fatal(err)
	}
	if again := readPage(t, path); again != first {
		t.Errorf("the same run wrote a different page:\n%s\nthen\n%s", first, again)
	}
	if strings.Count(first, "# Benchmark figures") != 1 || strings.Count(first, "| a figure |") != 1 {
		t.Errorf("header or row repeated:\n%s", first)
	}
	if strings.Index(first, "| a figure |") > strings.Index(first, "| b figure |") {
		t.Errorf("rows not sorted by figure:\n%s", first)
	}
	if err := writeFiguresRun(path, nil, run); err != nil {
		t.Fatal(err)
	}
	if got := readPage(t, path); !strings.Contains(got, "| a figure | 1.0 | ms | 2026-12-01 |") || !strings.Contains(got, "figures measured: 0 of the 2 rows") {
		t.Errorf("an empty run lost rows:\n%s", got)
	}
}

// TestWriteFiguresKeepsOldPage: a page in the format before the header
// named the last run is read back whole.
func TestWriteFiguresKeepsOldPage(t *testing.T) {
	path := filepath.Join(t.TempDir(), "benchmarks.md")
	old := "# Benchmark figures\n\nSome words.\n\n| figure | value | unit | measured |\n|---|---:|---|---|\n| chaos: faults | 24.0 | faults | 2026-12-06 |\n"
	if err := os.WriteFile(path, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := writeFiguresRun(path, nil, testRun(time.Now())); err != nil {
		t.Fatal(err)
	}
	if got := readPage(t, path); !strings.Contains(got, "| chaos: faults | 24.0 | faults | 2026-12-06 |") || strings.Contains(got, "Some words") {
		t.Errorf("old page not carried over:\n%s", got)
	}
}

// TestFigureNamesQualifiesDetails: an indented row is named after the row
// it details, so the same detail of two runs keeps two rows; a name
// given twice is told apart by its unit.
func TestFigureNamesQualifiesDetails(t *testing.T) {
	got := figureNames([]row{
		{"heartbeats absorbed, default TTL", 1, "/s"},
		{"  heartbeat latency p99", 2, "ms"},
		{"heartbeats absorbed, 1s TTL", 3, "/s"},
		{"  heartbeat latency p99", 4, "ms"},
		{"a | b", 5, "x"},
		{"history", 6, "events"},
		{"history", 7, "entries"},
	})
	want := []string{
		"heartbeats absorbed, default TTL",
		"heartbeats absorbed, default TTL — heartbeat latency p99",
		"heartbeats absorbed, 1s TTL",
		"heartbeats absorbed, 1s TTL — heartbeat latency p99",
		"a / b",
		"history",
		"history (entries)",
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("name %d = %q, want %q", i, got[i], want[i])
		}
	}
}

// TestCPUModel reads the model name from a cpuinfo file.
func TestCPUModel(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cpuinfo")
	if err := os.WriteFile(path, []byte("processor\t: 0\nmodel name\t: Some CPU @ 2GHz\nflags\t: x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := cpuModel(path); got != "Some CPU @ 2GHz" {
		t.Errorf("cpuModel = %q", got)
	}
	if got := cpuModel(filepath.Join(t.TempDir(), "none")); got != "unknown" {
		t.Errorf("cpuModel of a missing file = %q", got)
	}
}
