package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"golang.org/x/term"
)

// progressStyle is how a long command shows its progress: a bar redrawn
// in place when its output is a terminal, plain lines now and then when it
// is a file or a pipe (a bar's carriage returns make one endless line
// there), or nothing under -quiet.
type progressStyle int

const (
	progressQuiet progressStyle = iota
	progressLines
	progressBar
)

// linesEvery is the least time between two plain progress lines.
const linesEvery = 5 * time.Second

// progressStyleFor returns the style for output w: progressQuiet when quiet,
// progressBar when w is a terminal, progressLines otherwise.
func progressStyleFor(w io.Writer, quiet bool) progressStyle {
	switch {
	case quiet:
		return progressQuiet
	case isTerminal(w):
		return progressBar
	}
	return progressLines
}

// isTerminal reports whether w is a file open on a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// progressLine shows one line of changing state: redrawn in place on a
// terminal, else printed again each time it changes.
type progressLine struct {
	w    io.Writer
	tty  bool
	last string
}

func newProgressLine(w io.Writer, tty bool) *progressLine {
	return &progressLine{w: w, tty: tty}
}

// update shows s if it differs from what is shown.
func (p *progressLine) update(s string) {
	if s == p.last {
		return
	}
	p.last = s
	if p.tty {
		fmt.Fprintf(p.w, "\r\x1b[K%s", s)
		return
	}
	fmt.Fprintln(p.w, s)
}

// done ends a line redrawn in place.
func (p *progressLine) done() {
	if p.tty && p.last != "" {
		fmt.Fprintln(p.w)
	}
}
