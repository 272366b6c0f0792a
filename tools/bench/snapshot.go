package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/ordoplane/ordo/clock"
	"github.com/ordoplane/ordo/history/backup"
	"github.com/ordoplane/ordo/projections/all"
	"github.com/ordoplane/ordo/storage/kv"
	"github.com/ordoplane/ordo/storage/snapshots"
)

// snapshotRows saves the whole state of the generated scheduling history
// of n events (keptHistory, rebuild.go) to a snapshot file, checks it
// whole, and restores it over HTTP into a three-server cluster on this
// machine (raft over loopback TCP): the time the leader took to answer,
// and until every server had applied the restore's record.
func snapshotRows(n int, keep string) ([]row, error) {
	return withKeptHistory(n, keep, snapshotFigures) // rebuild.go
}

// snapshotFigures measures snapshotRows' figures on src, with dir for
// the file and the cluster.
func snapshotFigures(src *kv.Store, dir string) ([]row, error) {
	path := filepath.Join(dir, "bench.snap")
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	snap := src.Snapshot()
	t0, c0 := time.Now(), cpuTime()
	_, err = backup.Save(f, snap, backup.SaveOptions{Server: "bench", Projections: all.Projections(), Clock: clock.System{}})
	if err == nil {
		err = f.Sync()
	}
	saveTime, saveCPU := time.Since(t0), cpuTime()-c0
	snap.Close()
	f.Close()
	if err != nil {
		return nil, err
	}
	file, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	t0 = time.Now()
	sum, err := snapshots.Verify(bufio.NewReader(bytes.NewReader(file)), nil)
	checkTime := time.Since(t0)
	if err != nil {
		return nil, err
	}
	mb := float64(len(file)) / (1 << 20)

	agents, err := startCluster(filepath.Join(dir, "cluster"), 3, false) // cluster.go
	defer func() {
		for _, a := range agents {
			a.Shutdown()
		}
	}()
	if err != nil {
		return nil, err
	}
	leader, err := waitLeader(agents)
	if err != nil {
		return nil, err
	}
	t0 = time.Now()
	var res struct{ Index, RecordedAt uint64 }
	err = benchClient(leader.HTTPAddr()).Put(context.Background(), "/v1/operator/snapshot", bytes.NewReader(file), &res)
	answered := time.Since(t0)
	if err != nil {
		return nil, fmt.Errorf("restore: %w", err)
	}
	for _, a := range agents {
		for a.FSM().Applied() < res.RecordedAt {
			if time.Since(t0) > 10*time.Minute {
				return nil, fmt.Errorf("restore: a server did not install it within 10 minutes")
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	everywhere := time.Since(t0)
	return []row{
		{"snapshot: file of the generated history's whole state", mb, "MiB"},
		{"snapshot: rows", float64(sum.Rows), "rows"},
		{"snapshot: save (from a store snapshot to a synced file)", mb / saveTime.Seconds(), "MiB/s"},
		{"snapshot: save, total", saveTime.Seconds(), "s"},
		{"snapshot: save, CPU per row", saveCPU.Seconds() * 1e9 / float64(sum.Rows), "ns"},
		{"snapshot: check whole (inspect, and each restore twice)", mb / checkTime.Seconds(), "MiB/s"},
		{"snapshot: restore into 3 servers, the leader's answer", answered.Seconds(), "s"},
		{"snapshot: restore into 3 servers, until every server installed it", everywhere.Seconds(), "s"},
	}, nil
}
