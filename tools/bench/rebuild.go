package main

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"os"
	"runtime/pprof"
	"slices"
	"syscall"
	"time"

	"github.com/ordoplane/ordo/clock"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/all"
	"github.com/ordoplane/ordo/projections/fsm"
	"github.com/ordoplane/ordo/projections/rebuild"
	"github.com/ordoplane/ordo/storage/kv"
	"github.com/ordoplane/ordo/storage/raftlog"
)

// rebuildHistory applies a generated scheduling history of about n events
// (schedulingHistory) through the FSM into a fresh store in dir.
func rebuildHistory(dir string, n int) (*kv.Store, uint64, error) {
	store, err := kv.Open(dir, kv.DefaultConfig())
	if err != nil {
		return nil, 0, err
	}
	fsm, err := fsm.New(store, fsm.Config{Projections: all.Projections()})
	if err != nil {
		store.Close()
		return nil, 0, err
	}
	defer fsm.Close()
	evs, err := schedulingHistory(n, math.MaxUint64, func(logs []raftlog.Log) error {
		fsm.Apply(logs)
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	return store, evs, nil
}

// rebuildRows measures rebuilding every projection from a generated
// history of n events: from scratch into a fresh store, and online into
// the shadow keyspace of the live store with the switch (what `ordo
// operator projections rebuild` does), idle and under a write load.
func rebuildRows(n int) ([]row, error) {
	dir, err := os.MkdirTemp("", "ordo-bench-rebuild-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	t0 := time.Now()
	src, evs, err := rebuildHistory(dir+"/src", n)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	gen := time.Since(t0)
	fmt.Fprintf(os.Stderr, "bench: rebuild history of %d events generated in %s\n", evs, gen.Round(time.Millisecond))
	settle(src)

	scratch, err := profiledScratch(src, dir+"/dst")
	if err != nil {
		return nil, err
	}
	f, err := fsm.New(src, fsm.Config{Projections: all.Projections(), AllowStale: true})
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// Under writes first: the load's baseline must not run while Pebble
	// compacts the tables an earlier switch ingested.
	loaded, err := onlineUnderWrites(f) // rebuildwrites.go
	if err != nil {
		return nil, err
	}
	online, err := onlineIdle(f, "")
	if err != nil {
		return nil, err
	}
	return append(append(scratch, online...), loaded...), nil
}

// onlineIdle rebuilds every projection of f online, the FSM idle (what
// `ordo operator projections rebuild` does), with a CPU profile into
// profile when set, and returns its figures.
func onlineIdle(f *fsm.FSM, profile string) ([]row, error) {
	rb := fsm.NewRebuilder(f, fsm.RebuilderConfig{Clock: clock.System{}})
	defer rb.Close()
	stopProfile, err := startProfile(profile)
	if err != nil {
		return nil, err
	}
	t0, c0 := time.Now(), cpuTime()
	job, err := rb.Do(context.Background(), fsm.JobRebuild, nil)
	online, onlineCPU := time.Since(t0), cpuTime()-c0
	stopProfile()
	if err != nil {
		return nil, err
	}
	return []row{
		{"rebuild: online into the shadow, switch included (the default: every projection at once, the FSM idle)", float64(job.Events) / online.Seconds(), "events/s"},
		{"rebuild: online, total", online.Seconds(), "s"},
		{"rebuild: online, CPU per event", onlineCPU.Seconds() * 1e6 / float64(job.Events), "µs"},
		{"rebuild: online, the switch (the FSM applies nothing meanwhile)", job.SwitchSeconds * 1000, "ms"},
		{"rebuild: online, reads held in the switch", job.ReadPauseSeconds * 1000, "ms"},
	}, nil
}

// scratchRebuild rebuilds every projection from src into a fresh store in
// dir, calls done, checks what it rebuilt, and returns what it replayed,
// the time and the process CPU it took.
func scratchRebuild(src *kv.Store, dir string, done func()) (rebuild.Stats, time.Duration, time.Duration, error) {
	dst, err := kv.Open(dir, kv.DefaultConfig())
	if err != nil {
		return rebuild.Stats{}, 0, 0, err
	}
	defer dst.Close()
	t0, c0 := time.Now(), cpuTime()
	st, err := rebuild.Rebuild(src, dst, all.Projections(), 0, nil)
	took, cpu := time.Since(t0), cpuTime()-c0
	done()
	if err != nil {
		return st, 0, 0, err
	}
	return st, took, cpu, sameProjections(src, dst)
}

// sameProjections fails unless every projection in a equals the one in b
// (projections.Checksum): a rate is reported only for a rebuild that
// rebuilt the live projections.
func sameProjections(a, b kv.Reader) error {
	for _, p := range all.Projections() {
		sa, err := projections.Checksum(a, p)
		if err != nil {
			return err
		}
		sb, err := projections.Checksum(b, p)
		if err != nil {
			return err
		}
		if sa != sb {
			return fmt.Errorf("rebuilt projection %s differs from the live one", p.Name())
		}
	}
	return nil
}

// cpuTime returns the process's user and system CPU time so far: on a
// shared machine it says what a rebuild costs whatever else runs.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// rebuildProfile, when set, is where rebuildRows writes a CPU profile of
// the from-scratch rebuild alone.
var rebuildProfile string

// startProfile starts a CPU profile into path (none when path is empty)
// and returns what stops it.
func startProfile(path string) (func(), error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// keptHistory opens the generated history of n events kept in keep, or
// generates it there first; with keep empty, it generates it in a
// directory under dir.
func keptHistory(n int, keep, dir string) (*kv.Store, error) {
	if keep == "" {
		src, _, err := rebuildHistory(dir+"/src", n)
		return src, err
	}
	if _, err := os.Stat(keep); err == nil {
		return kv.Open(keep, kv.DefaultConfig())
	}
	src, _, err := rebuildHistory(keep, n)
	return src, err
}

// scratchRows measures one part of the rebuild figures alone, the ones to
// watch while working on a rebuild: mode "scratch" the from-scratch
// rebuild, "online" the online rebuild with the FSM idle, "writes" the
// online rebuilds under a write load. With keep set, the generated history lives in
// that directory and a later run reuses it (its size is then the one it
// was generated with; an online rebuild leaves it as it found it).
func scratchRows(n int, keep string, mode string) ([]row, error) {
	return withKeptHistory(n, keep, func(src *kv.Store, dir string) ([]row, error) { return scratchMode(src, dir, mode) })
}

// withKeptHistory calls fn with the generated history of n events
// (keptHistory) and a temporary directory, removed after.
func withKeptHistory(n int, keep string, fn func(src *kv.Store, dir string) ([]row, error)) ([]row, error) {
	dir, err := os.MkdirTemp("", "ordo-bench-history-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	src, err := keptHistory(n, keep, dir)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	settle(src)
	return fn(src, dir)
}

// scratchMode measures the rebuild figures of mode (see scratchRows) on
// src, with dir for its stores.
func scratchMode(src *kv.Store, dir, mode string) ([]row, error) {
	if mode == "scratch" {
		return profiledScratch(src, dir+"/dst")
	}
	f, err := fsm.New(src, fsm.Config{Projections: all.Projections(), AllowStale: true})
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if mode == "writes" {
		return onlineUnderWrites(f) // rebuildwrites.go
	}
	return onlineIdle(f, rebuildProfile)
}

// rebuildRuns is how many from-scratch rebuilds profiledScratch times: on
// a machine whose speed drifts by 10-25% between runs, one run is not a
// figure, the median of a few is.
var rebuildRuns = 3

// profiledScratch rebuilds every projection from src into a fresh store
// in dir, rebuildRuns times (the first with the CPU profile
// -rebuild-profile asks for), and returns the from-scratch figures: the
// median run's, with the fastest and slowest rates.
func profiledScratch(src *kv.Store, dir string) ([]row, error) {
	type run struct {
		events    uint64
		took, cpu time.Duration
	}
	runs := make([]run, max(rebuildRuns, 1))
	for i := range runs {
		profile := ""
		if i == 0 {
			profile = rebuildProfile
		}
		stopProfile, err := startProfile(profile)
		if err != nil {
			return nil, err
		}
		dst := fmt.Sprintf("%s-%d", dir, i)
		st, took, cpu, err := scratchRebuild(src, dst, stopProfile)
		if err != nil {
			return nil, err
		}
		if err := os.RemoveAll(dst); err != nil {
			return nil, err
		}
		runs[i] = run{events: st.Events, took: took, cpu: cpu}
		fmt.Fprintf(os.Stderr, "bench: from-scratch rebuild %d of %d: %.0f events/s\n", i+1, len(runs), float64(st.Events)/took.Seconds())
	}
	slices.SortFunc(runs, func(a, b run) int { return cmp.Compare(a.took, b.took) })
	med, fast, slow := runs[len(runs)/2], runs[0], runs[len(runs)-1]
	rate := func(r run) float64 { return float64(r.events) / r.took.Seconds() }
	return []row{
		{"rebuild: generated history (nodes, jobs, evals, allocs)", float64(med.events), "events"},
		{fmt.Sprintf("rebuild: every projection from scratch into a fresh store (median of %d)", len(runs)), rate(med), "events/s"},
		{"rebuild: every projection from scratch, the fastest run", rate(fast), "events/s"},
		{"rebuild: every projection from scratch, the slowest run", rate(slow), "events/s"},
		{"rebuild: every projection from scratch, total (median)", med.took.Seconds(), "s"},
		{"rebuild: every projection from scratch, CPU per event (median run)", med.cpu.Seconds() * 1e6 / float64(med.events), "µs"},
	}, nil
}
