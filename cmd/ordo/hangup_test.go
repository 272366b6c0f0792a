package main

import (
	"io"
	"log/slog"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestHangupCaughtForTasks: an agent started with SIGHUP ignored (as under
// nohup) catches it instead, so a process it starts begins with SIGHUP at
// its default (not in SigIgn) and a task can trap it.
func TestHangupCaughtForTasks(t *testing.T) {
	signal.Ignore(syscall.SIGHUP) // as nohup leaves it
	defer signal.Reset(syscall.SIGHUP)
	if !hupIgnoredInChild(t) {
		t.Fatal("a child of a process ignoring SIGHUP does not ignore it: the test shows nothing")
	}
	stop := catchHangup(slog.New(slog.NewTextHandler(io.Discard, nil)))
	defer stop()
	if hupIgnoredInChild(t) {
		t.Fatal("with SIGHUP caught, a child still starts with it ignored")
	}
}

// hupIgnoredInChild starts a shell and reports whether SIGHUP is in its
// ignored set.
func hupIgnoredInChild(t *testing.T) bool {
	t.Helper()
	out, err := exec.Command("/bin/sh", "-c", "grep SigIgn /proc/self/status").Output()
	if err != nil {
		t.Skipf("no /proc/self/status: %v", err)
	}
	f := strings.Fields(string(out))
	mask, err := strconv.ParseUint(f[len(f)-1], 16, 64)
	if err != nil {
		t.Fatalf("SigIgn %q: %v", out, err)
	}
	return mask&(1<<(syscall.SIGHUP-1)) != 0
}
