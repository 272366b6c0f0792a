package stats_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/ordoplane/ordo/client/stats"
	"github.com/ordoplane/ordo/clock/clocktest"
)

// fakeProc writes a proc tree: meminfo, stat, uptime, cpuinfo and the
// stat and status of processes.
func fakeProc(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, text := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// procStat is /proc/<pid>/stat with the command name (spaces and
// parentheses included), process group, utime, stime and start time set.
func procStat(pid, comm, pgrp, utime, stime, start string) string {
	return pid + " (" + comm + ") S 1 " + pgrp + " 0 0 0 0 0 0 0 0 " + utime + " " + stime + " 0 0 20 0 1 0 " + start + " 0 0\n"
}

func TestHostAndProcesses(t *testing.T) {
	root := fakeProc(t, map[string]string{
		"meminfo": "MemTotal:       1000 kB\nMemFree:         100 kB\nMemAvailable:    400 kB\n",
		"stat":    "cpu  10 0 10 80 0 0 0 0\ncpu0 10 0 10 80 0 0 0 0\nintr 1\n",
		"uptime":  "100.00 50.00\n",
		"cpuinfo": "processor\t: 0\ncpu MHz\t\t: 2000.000\n",
		"mounts":  "",
		// Task leader 10 with a child 11 in its group; 12 is another group's.
		"10/stat":   procStat("10", "sh -c (x)", "10", "300", "100", "5000"),
		"10/status": "Name:\tsh\nVmRSS:\t    2048 kB\nVmSwap:\t       0 kB\n",
		"11/stat":   procStat("11", "sleep", "10", "0", "0", "9000"),
		"11/status": "Name:\tsleep\nVmRSS:\t    1024 kB\n",
		"12/stat":   procStat("12", "other", "12", "0", "0", "9000"),
	})
	clk := clocktest.NewClock(time.Unix(1000, 0))
	s := stats.New(stats.Config{ProcRoot: root, Clock: clk})

	h, err := s.Host()
	if err != nil {
		t.Fatal(err)
	}
	if h.Memory.Total != 1000<<10 || h.Memory.Available != 400<<10 || h.Memory.Used != 600<<10 || h.Uptime != 100 ||
		len(h.CPU) != 1 || h.CPU[0].CPU != "cpu0" || h.CPU[0].Idle != 80 || h.CPU[0].User != 10 || h.CPU[0].System != 10 {
		t.Fatalf("Host = %+v (CPU %+v, memory %+v)", h, h.CPU[0], h.Memory)
	}

	pids := stats.GroupPIDs(root, 10)
	if !slices.Equal(pids, []int{10, 11}) {
		t.Fatalf("GroupPIDs(10) = %v", pids)
	}
	// The first sample covers the process's life: 4 s of CPU over the 50
	// s since it started (uptime 100 s, started at 50 s).
	u := s.Processes(pids)
	lead := u.Pids["10"]
	if lead == nil || lead.MemoryStats.RSS != 2048<<10 || lead.CpuStats.UserMode != 6 || lead.CpuStats.SystemMode != 2 ||
		lead.CpuStats.Percent != 8 || lead.CpuStats.TotalTicks != 160 {
		t.Fatalf("pid 10 = %+v %+v", lead.MemoryStats, lead.CpuStats)
	}
	if u.ResourceUsage.MemoryStats.RSS != 3072<<10 || u.ResourceUsage.CpuStats.Percent != 8 || u.Timestamp != clk.Now().UnixNano() {
		t.Fatalf("sum = %+v %+v", u.ResourceUsage.MemoryStats, u.ResourceUsage.CpuStats)
	}
	// The next covers the time since: 1 s of user CPU over 2 s.
	clk.Advance(2 * time.Second)
	if err := os.WriteFile(filepath.Join(root, "10/stat"), []byte(procStat("10", "sh -c (x)", "10", "400", "100", "5000")), 0o644); err != nil {
		t.Fatal(err)
	}
	u = s.Processes(pids)
	if c := u.Pids["10"].CpuStats; c.UserMode != 50 || c.SystemMode != 0 || c.Percent != 50 {
		t.Fatalf("pid 10 over 2 s = %+v", c)
	}
}
