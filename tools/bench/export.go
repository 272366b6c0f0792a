package main

import (
	"bufio"
	"flag"
	"os"
	"path/filepath"
	"time"

	"github.com/ordoplane/ordo/history/export"
	"github.com/ordoplane/ordo/projections/all"
	"github.com/ordoplane/ordo/storage/kv"
)

// exportEvents is how many events the export and replay figures use.
var exportEvents = flag.Int("export-events", 1000000, "events in the archive for the history export and replay figures")

// exportReplayRates fills an archive with n generated events (fillArchive,
// one event per entry, through the FSM), exports it whole to a history
// file from a snapshot, checks the file, and replays it into a fresh store
// (export.Load: every projection rebuilt, the archive copied), timing each
// by the clock and by the process's CPU time (cpuTime, rebuild.go), which
// holds on a machine busy with other work.
func exportReplayRates(n int) ([]row, error) {
	dir, err := os.MkdirTemp("", "ordo-bench-export-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	src, _, err := fillArchive(filepath.Join(dir, "src"), n)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	path := filepath.Join(dir, "bench.olog")

	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	snap := src.Snapshot()
	c0 := cpuTime()
	t0 := time.Now()
	h, err := export.Export(f, snap, export.Options{Server: "bench", Created: time.Now()})
	if err == nil {
		err = f.Sync()
	}
	exportTime, exportCPU := time.Since(t0), cpuTime()-c0
	snap.Close()
	f.Close()
	if err != nil {
		return nil, err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}

	f, err = os.Open(path)
	if err != nil {
		return nil, err
	}
	t0 = time.Now()
	_, err = export.Verify(bufio.NewReader(f))
	verifyTime := time.Since(t0)
	f.Close()
	if err != nil {
		return nil, err
	}

	dst, err := kv.Open(filepath.Join(dir, "dst"), kv.DefaultConfig())
	if err != nil {
		return nil, err
	}
	defer dst.Close()
	c0, t0 = cpuTime(), time.Now()
	st, err := export.Load(path, dst, all.Projections())
	loadTime, loadCPU := time.Since(t0), cpuTime()-c0
	if err != nil {
		return nil, err
	}
	ev := float64(h.Events)
	return []row{
		{"history export (whole archive to a file)", ev / exportTime.Seconds(), "events/s"},
		{"history export: CPU per event (all threads)", exportCPU.Seconds() * 1e6 / ev, "µs"},
		{"history export: events exported", ev, "events"},
		{"history export: file size per event", float64(fi.Size()) / ev, "bytes"},
		{"history file check (decode + SHA-256)", ev / verifyTime.Seconds(), "events/s"},
		{"history replay (file into fresh projections + archive)", float64(st.Events) / loadTime.Seconds(), "events/s"},
		{"history replay: CPU per event (all threads)", loadCPU.Seconds() * 1e6 / float64(st.Events), "µs"},
		{"history replay: total time", loadTime.Seconds(), "s"},
	}, nil
}
