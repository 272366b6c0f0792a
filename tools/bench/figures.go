package main

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strings"
	"time"
)

// figuresHeader opens the figures page (-doc, docs/benchmarks.md): what
// it is and how it is kept.
const figuresHeader = `# Benchmark figures

Written by ` + "`make bench`" + ` (tools/bench, -doc): every figure it
measured, with the day it was last measured on this machine (2 cores,
shared). A run of some figures (` + "`BENCHFLAGS=\"-only chaos\"`" + `)
replaces those rows and keeps the others. Compare runs on the same
machine only; what each figure measures is said in tools/bench's
package comment and the file that measures it.

| figure | value | unit | measured |
|---|---:|---|---|
`

// writeFigures merges rows into the table of the page at path (made
// when absent): a figure measured now replaces its row, the others stay.
func writeFigures(path string, rows []row, now time.Time) error {
	type line struct{ value, unit, day string }
	table := map[string]line{}
	f, err := os.Open(path)
	switch {
	case err == nil:
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			cells := strings.Split(strings.Trim(sc.Text(), "|"), "|")
			if len(cells) != 4 || strings.TrimSpace(cells[0]) == "figure" || strings.HasPrefix(cells[0], "---") {
				continue
			}
			table[strings.TrimSpace(cells[0])] = line{strings.TrimSpace(cells[1]), strings.TrimSpace(cells[2]), strings.TrimSpace(cells[3])}
		}
		f.Close()
		if err := sc.Err(); err != nil {
			return fmt.Errorf("read %s: %w", path, err)
		}
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	day := now.UTC().Format("2006-01-02")
	for _, r := range rows {
		table[strings.ReplaceAll(r.figure, "|", "/")] = line{fmt.Sprintf("%.1f", r.value), r.unit, day}
	}
	names := make([]string, 0, len(table))
	for n := range table {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString(figuresHeader)
	for _, n := range names {
		l := table[n]
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", n, l.value, l.unit, l.day)
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}
