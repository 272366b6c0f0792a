package main

import (
	"fmt"
	"os"
	"time"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections/all"
	"github.com/ordoplane/ordo/projections/fsm"
	"github.com/ordoplane/ordo/projections/rebuild"
	"github.com/ordoplane/ordo/storage/kv"
	"github.com/ordoplane/ordo/storage/raftlog"
)

// fillArchive applies n single-event entries through the FSM into a fresh
// store in dir and returns the store and how long the FSM took.
func fillArchive(dir string, n int) (*kv.Store, time.Duration, error) {
	store, err := kv.Open(dir, kv.DefaultConfig())
	if err != nil {
		return nil, 0, err
	}
	fsm, err := fsm.New(store, fsm.Config{Projections: all.Projections()})
	if err != nil {
		store.Close()
		return nil, 0, err
	}
	const batch = 64
	logs := make([]raftlog.Log, 0, batch)
	var spent time.Duration
	for i := 1; i <= n; i++ {
		ns := &events.NamespaceUpserted{Namespace: events.Namespace{Name: fmt.Sprintf("ns-%d", i%5000), Description: "replay bench"}}
		ev, err := events.New(fmt.Sprintf("ev-%d", i), ns)
		if err != nil {
			return nil, 0, err
		}
		data, err := events.EncodeEntry(&events.Entry{Time: int64(i), CommandID: fmt.Sprintf("cmd-%d", i), Events: []events.Event{ev}})
		if err != nil {
			return nil, 0, err
		}
		logs = append(logs, raftlog.Log{Index: uint64(i), Term: 1, Data: data})
		if len(logs) == batch || i == n {
			t0 := time.Now()
			fsm.Apply(logs)
			spent += time.Since(t0)
			logs = logs[:0]
		}
	}
	return store, spent, nil
}

func applyRate(n int) ([]row, error) {
	dir, err := os.MkdirTemp("", "ordo-bench-apply-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	store, spent, err := fillArchive(dir, n)
	if err != nil {
		return nil, err
	}
	store.Close()
	return []row{{"FSM apply (1 event/entry, batches of 64)", float64(n) / spent.Seconds(), "entries/s"}}, nil
}

func replayRate(n int) ([]row, error) {
	dir, err := os.MkdirTemp("", "ordo-bench-replay-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	src, _, err := fillArchive(dir+"/src", n)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	dst, err := kv.Open(dir+"/dst", kv.DefaultConfig())
	if err != nil {
		return nil, err
	}
	defer dst.Close()
	t0 := time.Now()
	st, err := rebuild.Rebuild(src, dst, all.Projections(), 0, nil)
	if err != nil {
		return nil, err
	}
	el := time.Since(t0)
	return []row{{"archive replay into fresh projections", float64(st.Events) / el.Seconds(), "events/s"}}, nil
}
