package main

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/all"
	"github.com/ordoplane/ordo/projections/fsm"
	"github.com/ordoplane/ordo/projections/history"
	"github.com/ordoplane/ordo/storage/kv"
	"github.com/ordoplane/ordo/storage/raftlog"
)

// historyNode is the entity whose timeline the history figures read.
const historyNode = "bench-node"

// fillHistory applies n entries through the FSM into a fresh store in dir:
// `own` of them (spread evenly) are about historyNode — its status going
// down and ready, allocations placed on it and reported running — and the
// rest about 500 other nodes, their allocations and 50 jobs. Leader times
// advance one second per entry.
func fillHistory(dir string, n, own int) (*kv.Store, error) {
	store, err := kv.Open(dir, kv.DefaultConfig())
	if err != nil {
		return nil, err
	}
	fsm, err := fsm.New(store, fsm.Config{Projections: all.Projections()})
	if err != nil {
		store.Close()
		return nil, err
	}
	defer fsm.Close()
	alloc := func(id, node string, i int) events.Allocation {
		job := fmt.Sprintf("job-%d", i%50)
		return events.Allocation{ID: id, Namespace: "default", EvalID: fmt.Sprintf("eval-%d", i), Name: job + ".web[0]",
			NodeID: node, JobID: job, TaskGroup: "web", Resources: events.Resources{CPU: 100, MemoryMB: 64},
			DesiredStatus: events.AllocDesiredRun, ClientStatus: events.AllocClientPending}
	}
	every := n / own
	// payload returns entry i's event: for historyNode a status change, a
	// placement or the report of its previous placement running, in turn;
	// for the others, those or a job registration.
	payload := func(i int, node string, mine bool) events.Payload {
		k, prev := i%4, i-1
		if mine {
			k, prev = (i/every)%3, i-every
		}
		switch k {
		case 0:
			status := events.NodeStatusDown
			if k%8 == 4 {
				status = events.NodeStatusReady
			}
			return &events.NodeStatusUpdated{ID: node, Status: status, MissedHeartbeat: status == events.NodeStatusDown}
		case 1:
			return &events.AllocsPlaced{EvalID: fmt.Sprintf("eval-%d", i), Allocs: []events.Allocation{alloc(fmt.Sprintf("alloc-%d", i), node, i)}}
		case 2:
			return &events.AllocsClientUpdated{NodeID: node, Updates: []events.AllocClientUpdate{{
				ID: fmt.Sprintf("alloc-%d", prev), ClientStatus: events.AllocClientRunning}}}
		}
		return &events.JobRegistered{Job: events.Job{ID: fmt.Sprintf("job-%d", i%50), Namespace: "default", Type: events.JobTypeService,
			Priority: 50, Version: uint64(i), TaskGroups: []events.TaskGroup{{Name: "web", Count: 1 + i%5}}}}
	}
	const batch = 64
	logs := make([]raftlog.Log, 0, batch)
	for i := 1; i <= n; i++ {
		node, mine := fmt.Sprintf("node-%d", i%500), i%every == 0
		if mine {
			node = historyNode
		}
		ev, err := events.New(fmt.Sprintf("ev-%d", i), payload(i, node, mine))
		if err != nil {
			return nil, err
		}
		data, err := events.EncodeEntry(&events.Entry{Time: int64(i) * int64(time.Second), CommandID: fmt.Sprintf("cmd-%d", i),
			Actor: "bench", Events: []events.Event{ev}})
		if err != nil {
			return nil, err
		}
		logs = append(logs, raftlog.Log{Index: uint64(i), Term: 1, Data: data})
		if len(logs) == batch || i == n {
			fsm.Apply(logs)
			logs = logs[:0]
		}
	}
	return store, nil
}

// historyLatency measures history queries for an entity with own events
// among n: the whole timeline, the newest page of 100 and the last tenth
// of the time range, each answered as the API does (Timeline, then JSON),
// p50 and p99 over repeated runs.
func historyLatency(n, own int) ([]row, error) {
	dir, err := os.MkdirTemp("", "ordo-bench-history-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	store, err := fillHistory(dir, n, own)
	if err != nil {
		return nil, err
	}
	defer store.Close()
	snap := store.Snapshot()
	defer snap.Close()
	v := projections.NewView(snap)
	count := 0
	if err := history.Scan(v, events.KindNode, historyNode, false, func(history.Pos) error { count++; return nil }); err != nil {
		return nil, err
	}
	if count != own {
		return nil, fmt.Errorf("history of %s has %d events, want %d", historyNode, count, own)
	}
	const runs = 200
	var rows []row
	for _, tc := range []struct {
		name string
		q    history.Query
		want int
	}{
		{"whole timeline", history.Query{}, own},
		{"newest 100, reversed", history.Query{Reverse: true, PerPage: 100}, min(own, 100)},
		{"last tenth of the time", history.Query{Since: int64(n-n/10) * int64(time.Second)}, own / 10},
	} {
		q := tc.q
		q.Kind, q.ID = events.KindNode, historyNode
		lat := make([]time.Duration, 0, runs)
		for range runs {
			t0 := time.Now()
			pg, err := history.Timeline(v, q)
			if err != nil {
				return nil, err
			}
			if _, err := json.Marshal(pg.Events); err != nil {
				return nil, err
			}
			lat = append(lat, time.Since(t0))
			if len(pg.Events) < tc.want-1 || len(pg.Events) > tc.want+1 {
				return nil, fmt.Errorf("%s: %d events, want %d", tc.name, len(pg.Events), tc.want)
			}
		}
		slices.Sort(lat)
		ms := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))]) / float64(time.Millisecond) }
		label := fmt.Sprintf("history query, %d-event entity among %dk (%s)", own, n/1000, tc.name)
		rows = append(rows, row{label + " p50", ms(0.50), "ms"}, row{label + " p99", ms(0.99), "ms"})
	}
	return rows, nil
}
