package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/ordoplane/ordo/clock"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections/fsm"
	"github.com/ordoplane/ordo/storage/raftlog"
)

// rebuildWriteRate is the entries a second the write load of the online
// rebuild under writes applies (in raft-sized batches of rebuildWriteBatch
// every 1/(rate/batch) s): a busy scheduler's pace.
const (
	rebuildWriteRate  = 800
	rebuildWriteBatch = 8
)

// rebuildWriter applies a steady write load to f, from the index after its
// applied one: entries of node status updates and pending evals for the
// generated history's nodes and jobs. It records the longest Apply call,
// which is how long a write waited for the rebuild's switch.
type rebuildWriter struct {
	f       *fsm.FSM
	stop    chan struct{}
	done    sync.WaitGroup
	entries int
	longest time.Duration
	err     error
}

func startRebuildWriter(f *fsm.FSM) *rebuildWriter {
	w := &rebuildWriter{f: f, stop: make(chan struct{})}
	w.done.Add(1)
	go w.run()
	return w
}

func (w *rebuildWriter) run() {
	defer w.done.Done()
	tick := time.NewTicker(time.Second * rebuildWriteBatch / rebuildWriteRate)
	defer tick.Stop()
	index := w.f.Applied()
	for {
		select {
		case <-w.stop:
			return
		case <-tick.C:
		}
		logs := make([]raftlog.Log, 0, rebuildWriteBatch)
		for range rebuildWriteBatch {
			index++
			data, err := writeLoadEntry(index)
			if err != nil {
				w.err = err
				return
			}
			logs = append(logs, raftlog.Log{Index: index, Term: 1, Data: data})
		}
		t0 := time.Now()
		for i, res := range w.f.Apply(logs) {
			if err, ok := res.(error); ok {
				w.err = fmt.Errorf("write load entry %d: %w", logs[i].Index, err)
				return
			}
		}
		w.longest = max(w.longest, time.Since(t0))
		w.entries += len(logs)
	}
}

// end stops the load and returns what it applied, its longest Apply call
// and its error.
func (w *rebuildWriter) end() (int, time.Duration, error) {
	close(w.stop)
	w.done.Wait()
	return w.entries, w.longest, w.err
}

// writeLoadEntry is the write load's entry at index: a node's status
// update or a new pending eval of a job of the generated history.
func writeLoadEntry(index uint64) ([]byte, error) {
	var p events.Payload = &events.NodeStatusUpdated{ID: fmt.Sprintf("node-%04d", index%500), Status: events.NodeStatusReady, UpdatedAt: int64(index)}
	if index%2 == 0 {
		p = &events.EvalsUpserted{Evals: []events.Evaluation{{ID: fmt.Sprint("load-eval-", index), Namespace: fmt.Sprintf("team-%d", index%50),
			Priority: 50, Type: events.JobTypeService, TriggeredBy: events.EvalTriggerJobRegister,
			JobID: fmt.Sprintf("job-%d", index%20000), Status: events.EvalStatusPending, CreateTime: int64(index)}}}
	}
	ev, err := events.New(fmt.Sprint("load-", index), p)
	if err != nil {
		return nil, err
	}
	return events.EncodeEntry(&events.Entry{Time: int64(index) * 1e6, CommandID: fmt.Sprint("load-", index), Actor: "bench",
		Events: []events.Event{ev}})
}

// rebuildWriteBaseline is how long the write load runs alone first, for
// its longest write without a rebuild (a test shortens it).
var rebuildWriteBaseline = 10 * time.Second

// onlineUnderWrites runs the write load alone for rebuildWriteBaseline,
// then rebuilds every projection of f online while the load goes on,
// twice: with the Rebuilder's default parallelism (a core left to the
// server) and with every projection at once; it returns the jobs' and the
// load's figures.
func onlineUnderWrites(f *fsm.FSM) ([]row, error) {
	w := startRebuildWriter(f)
	time.Sleep(rebuildWriteBaseline)
	baseEntries, baseLongest, err := w.end()
	if err != nil {
		return nil, err
	}
	rows := []row{
		{"rebuild: the write load alone, entries/s", float64(baseEntries) / rebuildWriteBaseline.Seconds(), "entries/s"},
		{"rebuild: the write load alone, longest write (one Apply of 8 entries)", millis(baseLongest), "ms"},
	}
	for _, parallel := range []int{0, -1} {
		r, err := rebuildUnderWrites(f, parallel)
		if err != nil {
			return nil, err
		}
		rows = append(rows, r...)
	}
	return rows, nil
}

// rebuildUnderWrites rebuilds every projection of f online, parallel
// projections at once (fsm.Rebuilder.SubmitParallel), under the
// write load, and returns the figures.
func rebuildUnderWrites(f *fsm.FSM, parallel int) ([]row, error) {
	rb := fsm.NewRebuilder(f, fsm.RebuilderConfig{Clock: clock.System{}, Parallelism: parallel})
	defer rb.Close()
	w := startRebuildWriter(f)
	t0, s0 := time.Now(), f.Store().WriteStalls()
	job, err := rb.Do(context.Background(), fsm.JobRebuild, nil)
	took, s1 := time.Since(t0), f.Store().WriteStalls()
	entries, longest, werr := w.end()
	if err != nil {
		return nil, err
	}
	if werr != nil {
		return nil, werr
	}
	how := fmt.Sprintf("the default: at most %d at once while the FSM applies", job.Parallelism)
	if parallel < 0 {
		how = "all projections at once"
	}
	name := fmt.Sprintf("rebuild: online under writes (%d entries/s asked; %s)", rebuildWriteRate, how)
	return []row{
		{name + ", total", took.Seconds(), "s"},
		{name + ", writes done", float64(entries) / took.Seconds(), "entries/s"},
		{name + ", the switch", job.SwitchSeconds * 1000, "ms"},
		{name + ", reads held in the switch", job.ReadPauseSeconds * 1000, "ms"},
		{name + ", longest write (one Apply of 8 entries)", millis(longest), "ms"},
		{name + ", Pebble write stalls", float64(s1.Total() - s0.Total()), "stalls"},
		{name + ", time Pebble held writes", millis(s1.Duration - s0.Duration), "ms"},
	}, nil
}
