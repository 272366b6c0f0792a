package main

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"sort"
	"strings"
	"time"
)

// figuresIntro opens the figures page (-doc, docs/benchmarks.md): what it
// is and how it is produced. The page is generated whole on every run.
const figuresIntro = `# Benchmark figures

This page is generated: do not edit it by hand. ` + "`make bench`" + ` runs
tools/bench, prints its table and writes the figures here (` + "`-doc`" + `);
` + "`make bench BENCHFLAGS=\"-only load1,chaos\"`" + ` measures a subset (the
names are listed by ` + "`go run ./tools/bench -h`" + ` under ` + "`-only`" + `). A run
replaces the rows of the figures it measured and keeps every other row with
its value and the day it was measured, so rows of different days can sit
side by side: compare a figure only with the same figure measured on the
same machine. What each figure measures is said in tools/bench's package
comment and in the file that measures it; the other pages of docs/ link
here for figures. Rows named ` + "`go test -bench: …`" + ` or ` + "`test/…`" + ` are Go
benchmarks and tests, which ` + "`make bench`" + ` prints or ` + "`go test`" + ` runs but
which are not written here: they keep the value and day they were copied
in.
`

// figuresTableHead is the table's header; the rows below it are parsed
// back on the next run.
const figuresTableHead = "| figure | value | unit | measured |\n|---|---:|---|---|\n"

// benchRun says when, at which commit and on what machine figures were
// measured: the page's header names the last run that wrote it.
type benchRun struct {
	at      time.Time
	commit  string // short hash, "with uncommitted changes" when the tree was modified
	cpus    int
	cpu     string // model name
	goVer   string
	osArch  string
	written int // figures this run measured
}

// thisRun describes the running process's machine and the commit of the
// working tree it runs in.
func thisRun(now time.Time) benchRun {
	return benchRun{
		at:     now,
		commit: gitCommit(),
		cpus:   runtime.NumCPU(),
		cpu:    cpuModel("/proc/cpuinfo"),
		goVer:  runtime.Version(),
		osArch: runtime.GOOS + "/" + runtime.GOARCH,
	}
}

// gitCommit returns the working tree's commit (marked when the tree has
// uncommitted changes), from git or else from the binary's build info.
func gitCommit() string {
	if out, err := exec.Command("git", "describe", "--always", "--dirty= with uncommitted changes", "--abbrev=12").Output(); err == nil {
		if c := strings.TrimSpace(string(out)); c != "" {
			return c
		}
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				return s.Value[:12]
			}
		}
	}
	return "unknown"
}

// cpuModel returns the first "model name" of a /proc/cpuinfo file, or
// "unknown".
func cpuModel(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "unknown"
	}
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

// writeFigures writes the page at path with rows measured now on this
// machine, keeping the rows of the page that this run did not measure.
func writeFigures(path string, rows []row, now time.Time) error {
	return writeFiguresRun(path, rows, thisRun(now))
}

// figureLine is one row of the page's table.
type figureLine struct{ value, unit, day string }

// writeFiguresRun regenerates the page at path (made when absent): the
// header names run; a figure measured now replaces its row, the others
// stay as they were; the rows are sorted by figure.
func writeFiguresRun(path string, rows []row, run benchRun) error {
	table, err := readFigures(path)
	if err != nil {
		return err
	}
	day := run.at.UTC().Format("2006-01-02")
	written := map[string]bool{}
	for i, name := range figureNames(rows) {
		table[name] = figureLine{fmt.Sprintf("%.1f", rows[i].value), rows[i].unit, day}
		written[name] = true
	}
	run.written = len(written)
	return os.WriteFile(path, []byte(renderFigures(table, run)), 0o644)
}

// figureNames returns each row's name on the page. A row whose figure is
// indented (a detail of the row above it, as the simfleet figures print)
// is named after the last unindented row, "parent — detail", so the
// details of two runs (simfleet and simfleet-fast) do not share a row.
// A name a run gives twice (one figure in two units) is told apart by
// its unit. A "|" would split the table's cell and becomes "/".
func figureNames(rows []row) []string {
	names := make([]string, len(rows))
	seen := map[string]bool{}
	parent := ""
	for i, r := range rows {
		n := strings.ReplaceAll(r.figure, "|", "/")
		name := strings.TrimSpace(n)
		if strings.HasPrefix(n, " ") && parent != "" {
			name = parent + " — " + name
		} else {
			parent = name
		}
		if seen[name] {
			name += " (" + strings.ReplaceAll(r.unit, "|", "/") + ")"
		}
		seen[name] = true
		names[i] = name
	}
	return names
}

// readFigures parses the table of the page at path: figure → its line.
// A missing page is an empty table.
func readFigures(path string) (map[string]figureLine, error) {
	table := map[string]figureLine{}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return table, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read figures: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := sc.Text()
		if !strings.HasPrefix(l, "|") {
			continue
		}
		cells := strings.Split(strings.Trim(l, "|"), "|")
		if len(cells) != 4 {
			continue
		}
		name := strings.TrimSpace(cells[0])
		if name == "figure" || strings.HasPrefix(name, "---") {
			continue
		}
		table[name] = figureLine{strings.TrimSpace(cells[1]), strings.TrimSpace(cells[2]), strings.TrimSpace(cells[3])}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read figures %s: %w", path, err)
	}
	return table, nil
}

// renderFigures returns the whole page: the introduction, the last run
// and the table sorted by figure.
func renderFigures(table map[string]figureLine, run benchRun) string {
	names := make([]string, 0, len(table))
	for n := range table {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString(figuresIntro)
	fmt.Fprintf(&b, "\n## Last run\n\n")
	fmt.Fprintf(&b, "- date: %s\n", run.at.UTC().Format("2006-01-02 15:04 MST"))
	fmt.Fprintf(&b, "- commit: %s\n", run.commit)
	fmt.Fprintf(&b, "- machine: %d CPUs (%s), %s, %s\n", run.cpus, run.cpu, run.goVer, run.osArch)
	fmt.Fprintf(&b, "- figures measured: %d of the %d rows below\n", run.written, len(names))
	b.WriteString("\n## Figures\n\n")
	b.WriteString(figuresTableHead)
	for _, n := range names {
		l := table[n]
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", n, l.value, l.unit, l.day)
	}
	return b.String()
}
