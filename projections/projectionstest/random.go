package projectionstest

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections/all"
	"github.com/ordoplane/ordo/projections/fsm"
	"github.com/ordoplane/ordo/projections/namespaces"
	"github.com/ordoplane/ordo/projections/rebuild"
	"github.com/ordoplane/ordo/storage/kv"
	"github.com/ordoplane/ordo/storage/raftlog"
)

// Upsert returns an event upserting namespace name.
func Upsert(name string) *events.NamespaceUpserted {
	return &events.NamespaceUpserted{Namespace: events.Namespace{Name: name, Description: "ns " + name}}
}

// DeleteNS returns an event deleting namespace name.
func DeleteNS(name string) *events.NamespaceDeleted { return &events.NamespaceDeleted{Name: name} }

// Register returns an event registering server id.
func Register(id string) *events.ServerRegistered {
	return &events.ServerRegistered{ID: id, RaftAddr: id + ":4647", HTTPAddr: id + ":4646"}
}

// RandomLogs returns n raft log entries, indexes 1..n, of random namespace
// upserts (with metadata maps, whose encoding must be deterministic) and
// deletes (often of missing namespaces), server changes, preconditions that
// may fail, and reused command ids.
func RandomLogs(t testing.TB, rng *rand.Rand, n int) []raftlog.Log {
	t.Helper()
	name := func() string { return fmt.Sprintf("ns-%02d", rng.Intn(40)) }
	logs := make([]raftlog.Log, 0, n)
	for i := 1; i <= n; i++ {
		var ps []events.Payload
		for range 1 + rng.Intn(3) {
			switch r := rng.Intn(10); {
			case r < 5:
				meta := map[string]string{}
				for k := range rng.Intn(6) {
					meta[fmt.Sprintf("k%d", k)] = fmt.Sprint(rng.Intn(100))
				}
				if len(meta) == 0 && rng.Intn(2) == 0 {
					meta = nil
				}
				ps = append(ps, &events.NamespaceUpserted{Namespace: events.Namespace{
					Name: name(), Description: fmt.Sprint("d", rng.Intn(5)), Meta: meta}})
			case r < 8:
				ps = append(ps, DeleteNS(name()))
			case r < 9:
				ps = append(ps, Register(fmt.Sprint("s", rng.Intn(4))))
			default:
				ps = append(ps, &events.ServerRemoved{ID: fmt.Sprint("s", rng.Intn(4))})
			}
		}
		cmd := fmt.Sprint("cmd-", i)
		if rng.Intn(20) == 0 && i > 1 {
			cmd = fmt.Sprint("cmd-", 1+rng.Intn(i-1)) // a retry
		}
		e := Entry(t, cmd, ps...)
		e.Time = LeaderTime + int64(i)*1e6
		if rng.Intn(6) == 0 {
			ops := []events.PreconditionOp{events.Exists, events.Absent, events.ModifyIndex}
			e.Preconditions = []events.Precondition{{Table: namespaces.Table, Key: name(),
				Op: ops[rng.Intn(len(ops))], Index: uint64(rng.Intn(i))}}
		}
		logs = append(logs, Log(t, uint64(i), e))
	}
	return logs
}

// Grouped returns logs with runs of two to four entries merged into
// grouped entries (events.NewGroup) at random, renumbered from 1: the same
// commands in fewer raft entries, each group at its first command's time.
func Grouped(t testing.TB, rng *rand.Rand, logs []raftlog.Log) []raftlog.Log {
	t.Helper()
	var out []raftlog.Log
	for len(logs) > 0 {
		n := 1
		if rng.Intn(3) == 0 {
			n = min(len(logs), 2+rng.Intn(3))
		}
		cmds := make([]events.Entry, n)
		for i, l := range logs[:n] {
			e, err := events.DecodeEntry(l.Data)
			if err != nil {
				t.Fatal(err)
			}
			cmds[i] = *e
		}
		e := &cmds[0]
		if n > 1 {
			g := events.NewGroup(cmds[0].Time, cmds)
			e = &g
		}
		out = append(out, Log(t, uint64(len(out)+1), e))
		logs = logs[n:]
	}
	return out
}

// ApplyInBatches applies logs through f in raft batches of random size.
func ApplyInBatches(t testing.TB, rng *rand.Rand, f *fsm.FSM, logs []raftlog.Log) (rejected, dups int) {
	t.Helper()
	for len(logs) > 0 {
		n := min(len(logs), 1+rng.Intn(16))
		for _, r := range Apply(t, f, logs[:n]...) {
			for _, r := range append([]fsm.Result{r}, r.Group...) {
				if r.Err != nil {
					rejected++
				}
				if r.Duplicate {
					dups++
				}
			}
		}
		logs = logs[n:]
	}
	return rejected, dups
}

// Closed reports whether ch is closed (a Notifier's channel woken).
func Closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// Rebuilt returns a new store holding every projection rebuilt from the
// archive of src through index to (0: all of it), and what the rebuild
// replayed.
func Rebuilt(tb testing.TB, src kv.Reader, to uint64) (*kv.Store, rebuild.Stats) {
	tb.Helper()
	dst := OpenStore(tb)
	st, err := rebuild.Rebuild(src, dst, all.Projections(), to, nil)
	if err != nil {
		tb.Fatal(err)
	}
	return dst, st
}
