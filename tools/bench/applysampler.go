package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/metrics"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ordoplane/ordo/cmd/agent"
	"github.com/ordoplane/ordo/storage/kv"
)

// applyWindow is the longest FSM batch apply of one server in one
// sampling window, with what was going on then.
type applyWindow struct {
	at      time.Time
	server  int
	longest time.Duration
	// longestEntry: the longest single entry of any batch in the window,
	// its batch's commit not included (FSM.MaxEntryApply).
	longestEntry time.Duration
	// snapshotting: the server was writing a raft snapshot.
	snapshotting bool
	// gcCycles: Go GC cycles completed in the window (all servers share
	// the process).
	gcCycles uint32
	// lsm: the server's state store at the end of the window.
	lsm kv.Health
	// entries and batches: the entries the server's FSM applied in the
	// window and the raft batches they came in (a follower that fell
	// behind is handed many entries in one batch).
	entries, batches uint64
	// commitMS: the Pebble commits' share of the window's applies
	// (ordo_fsm_batch_commit_seconds), in ms; slowCommits: commits over
	// 25.6 ms (a histogram bucket bound) in the window. A long apply
	// whose time is the commit is a storage stall (a memtable rotation
	// syncing the WAL), not apply work.
	commitMS    float64
	slowCommits uint64
	// ioStallMS: milliseconds of the window in which every task of the
	// machine was stalled on I/O (/proc/pressure/io "full"); dirtyMB: the
	// machine's dirty page cache at the end of the window.
	ioStallMS, dirtyMB uint64
}

// applyWindows are the samples of a run.
type applyWindows struct{ w []applyWindow }

// applySampler reads every server's FSM.MaxApply every 100 ms, so a run
// reports not only its longest apply but how often applies are long and
// what coincided with the longest ones.
type applySampler struct {
	done chan struct{}
	wg   sync.WaitGroup
	out  applyWindows
}

func startApplySampler(agents []*agent.Agent) *applySampler {
	s := &applySampler{done: make(chan struct{})}
	for _, a := range agents {
		a.FSM().MaxApply() // start a new window
		a.FSM().MaxEntryApply()
	}
	s.wg.Go(func() {
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		lastGC := gcCount()
		lastIO := ioFullMicros()
		lastApplied := make([]uint64, len(agents))
		lastBatches := make([]uint64, len(agents))
		lastCommit := make([]commitSample, len(agents))
		for i, a := range agents {
			lastBatches[i], lastCommit[i] = fsmCounters(a)
			lastApplied[i] = a.FSM().Applied()
		}
		for {
			select {
			case <-s.done:
				return
			case now := <-t.C:
				gc := gcCount()
				io := ioFullMicros()
				dirty := dirtyMB()
				for i, a := range agents {
					applied := a.FSM().Applied()
					batches, c := fsmCounters(a)
					s.out.w = append(s.out.w, applyWindow{at: now, server: i, longest: a.FSM().MaxApply(), longestEntry: a.FSM().MaxEntryApply(),
						snapshotting: snapshotting(a.DataDir()), gcCycles: gc - lastGC, lsm: a.Store().Health(),
						entries: applied - lastApplied[i], batches: batches - lastBatches[i],
						ioStallMS: (io - lastIO) / 1000, dirtyMB: dirty,
						commitMS: (c.sum - lastCommit[i].sum) * 1000, slowCommits: c.slow - lastCommit[i].slow})
					lastApplied[i], lastBatches[i], lastCommit[i] = applied, batches, c
				}
				lastGC, lastIO = gc, io
			}
		}
	})
	return s
}

func (s *applySampler) stop() applyWindows {
	close(s.done)
	s.wg.Wait()
	return s.out
}

// batchApply and entryApply select a window's longest batch apply or
// its longest single entry apply.
func batchApply(x applyWindow) time.Duration { return x.longest }
func entryApply(x applyWindow) time.Duration { return x.longestEntry }

// longest returns the longest apply of any window, as of selects it.
func (w applyWindows) longest(of func(applyWindow) time.Duration) time.Duration {
	var d time.Duration
	for _, x := range w.w {
		d = max(d, of(x))
	}
	return d
}

// over counts the windows whose longest apply, as of selects it, passed d.
func (w applyWindows) over(of func(applyWindow) time.Duration, d time.Duration) int {
	n := 0
	for _, x := range w.w {
		if of(x) > d {
			n++
		}
	}
	return n
}

// report writes the ten longest windows and what coincided with them.
func (w applyWindows) report(out io.Writer, start time.Time) {
	top := append([]applyWindow(nil), w.w...)
	sort.Slice(top, func(i, j int) bool { return top[i].longest > top[j].longest })
	snaps := 0
	for _, x := range w.w {
		if x.snapshotting {
			snaps++
		}
	}
	slow := 0
	for _, x := range w.w {
		if x.slowCommits > 0 {
			slow++
		}
	}
	fmt.Fprintf(out, "bench: %d windows of 100 ms, %d with a raft snapshot being written, %d with an apply over 10 ms, %d with a Pebble commit over 25.6 ms\n",
		len(w.w), snaps, w.over(batchApply, 10*time.Millisecond), slow)
	for _, x := range top[:min(10, len(top))] {
		fmt.Fprintf(out, "bench:   %6.1f s server %d longest apply %8s (entry %s) commits=%.1fms (%d over 25.6ms) entries=%d in %d batches io-stalled=%dms dirty=%dMB snapshotting=%v gc=%d L0 files=%d sublevels=%d memtables=%d flushing=%d compacting=%d debt=%d MiB\n",
			x.at.Sub(start).Seconds(), x.server, x.longest.Round(time.Millisecond/10), x.longestEntry.Round(time.Millisecond/10), x.commitMS, x.slowCommits, x.entries, x.batches, x.ioStallMS, x.dirtyMB, x.snapshotting, x.gcCycles,
			x.lsm.L0Files, x.lsm.L0Sublevels, x.lsm.MemTables, x.lsm.Flushing, x.lsm.Compacting, x.lsm.CompactionDebt>>20)
	}
}

// snapshotting reports whether a raft snapshot is being written in the
// agent's data directory (hashicorp/raft writes it to a .tmp directory).
func snapshotting(dataDir string) bool {
	ents, err := os.ReadDir(filepath.Join(dataDir, "raft", "snapshots"))
	if err != nil {
		return false
	}
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".tmp") {
			return true
		}
	}
	return false
}

// gcCount returns the Go GC cycles completed so far.
func gcCount() uint32 {
	s := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(s)
	return uint32(s[0].Value.Uint64())
}

// commitSample is a server's ordo_fsm_batch_commit_seconds so far: the
// sum in seconds and the commits over 25.6 ms.
type commitSample struct {
	sum  float64
	slow uint64
}

// fsmCounters returns how many raft batches the agent's FSM applied
// (ordo_fsm_batch_apply_seconds' sample count) and its commits so far
// (ordo_fsm_batch_commit_seconds), zero when not registered. One gather
// serves both: a gather runs every gauge function of the agent, some of
// which read the disk, and the sampler runs every 100 ms in the process
// it measures.
func fsmCounters(a *agent.Agent) (batches uint64, c commitSample) {
	mfs, err := a.Registry().Gather()
	if err != nil {
		return 0, commitSample{}
	}
	for _, mf := range mfs {
		if len(mf.GetMetric()) == 0 {
			continue
		}
		h := mf.GetMetric()[0].GetHistogram()
		switch mf.GetName() {
		case "ordo_fsm_batch_apply_seconds":
			batches = h.GetSampleCount()
		case "ordo_fsm_batch_commit_seconds":
			c = commitSample{sum: h.GetSampleSum(), slow: h.GetSampleCount()}
			for _, b := range h.GetBucket() {
				if b.GetUpperBound() >= 0.0255 {
					c.slow -= b.GetCumulativeCount() // commits at or under the first bound >= 25.6 ms
					break
				}
			}
		}
	}
	return batches, c
}

// entriesWithin returns how many entries every agent's FSM applied so
// far and how many of them within bound seconds (a bucket bound of
// ordo_fsm_entry_apply_seconds).
func entriesWithin(agents []*agent.Agent, bound float64) (all, within uint64) {
	for _, a := range agents {
		mfs, err := a.Registry().Gather()
		if err != nil {
			continue
		}
		for _, mf := range mfs {
			if mf.GetName() != "ordo_fsm_entry_apply_seconds" || len(mf.GetMetric()) == 0 {
				continue
			}
			h := mf.GetMetric()[0].GetHistogram()
			all += h.GetSampleCount()
			for _, b := range h.GetBucket() {
				if b.GetUpperBound() == bound {
					within += b.GetCumulativeCount()
				}
			}
		}
	}
	return all, within
}

// ioFullMicros returns the machine's total time with every task stalled
// on I/O (/proc/pressure/io, "full"), in µs; 0 where unavailable.
func ioFullMicros() uint64 {
	b, err := os.ReadFile("/proc/pressure/io")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(line, "full ") {
			continue
		}
		for _, f := range strings.Fields(line) {
			if v, ok := strings.CutPrefix(f, "total="); ok {
				n, _ := strconv.ParseUint(v, 10, 64)
				return n
			}
		}
	}
	return 0
}

// dirtyMB returns the machine's dirty page cache (/proc/meminfo Dirty),
// in MiB; 0 where unavailable.
func dirtyMB() uint64 {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Dirty:"); ok {
			n, _ := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return n >> 10
		}
	}
	return 0
}
