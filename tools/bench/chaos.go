package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/ordoplane/ordo/test/linearizability/chaos"
)

// chaosRows are the figures of the long linearizability run (the harness
// of TestLinearizable in test/cluster, as `make chaos` runs it): three servers in
// child processes, six clients, faults on the leader in turn (kill,
// pause, partition, and a graceful transfer when the binary has it).
// They are the operations, failovers, operations with unknown outcome and,
// per kind of fault, the unavailability (from the fault to the first
// acknowledged write) p50, p99 and max. A history porcupine finds not
// linearizable is an error naming its visualization. quiet runs the
// servers on every core and burns none beside them; raftTimeout, when
// set, is the servers' -raft-timeout (and names the figures).
func chaosRows(faults, minOps int, quiet bool, raftTimeout time.Duration) ([]row, error) {
	dir, err := os.MkdirTemp("", "ordo-bench-chaos-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	bin, err := chaos.BuildBinary(dir)
	if err != nil {
		return nil, err
	}
	cfg := chaos.LongConfig(bin, filepath.Join(dir, "run"))
	cfg.Faults, cfg.MinOps = faults, minOps
	prefix := "chaos: "
	if quiet {
		cfg.ServerProcs, cfg.Hogs = 0, 0
		prefix = "chaos (quiet): "
	}
	if raftTimeout > 0 {
		cfg.ExtraArgs = append(cfg.ExtraArgs, "-raft-timeout", raftTimeout.String())
		prefix = strings.TrimSuffix(prefix, ": ") + fmt.Sprintf(", raft timeout %v: ", raftTimeout)
	}
	cfg.Logf = func(format string, args ...any) { fmt.Fprintf(os.Stderr, "bench chaos: "+format+"\n", args...) }
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	res, err := chaos.Run(ctx, cfg)
	if err != nil {
		return nil, err
	}
	fmt.Fprint(os.Stderr, res.Summary())
	v, err := res.Check(10*time.Minute, os.TempDir())
	if err != nil {
		return nil, err
	}
	if v.Result != porcupine.Ok {
		return nil, fmt.Errorf("history of %d operations: %s; visualization %s\n%s", len(res.History), v.Result, v.HTML, v.Explanation)
	}
	var rows []row
	for _, f := range res.Figures() {
		rows = append(rows, row{prefix + f.Name, f.Value, f.Unit})
	}
	return rows, nil
}
