package raftstore_test

import (
	"encoding/binary"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/ordoplane/ordo/storage/raftstore"
)

// sumFSM applies 8-byte big-endian numbers, keeping their count and sum.
type sumFSM struct {
	mu       sync.Mutex
	n, sum   uint64
	restored int
}

func (f *sumFSM) Apply(l *raft.Log) any {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n++
	f.sum += binary.BigEndian.Uint64(l.Data)
	return f.n
}

func (f *sumFSM) state() (n, sum uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.n, f.sum
}

func (f *sumFSM) Snapshot() (raft.FSMSnapshot, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return sumSnapshot{n: f.n, sum: f.sum}, nil
}

func (f *sumFSM) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	var b [16]byte
	if _, err := io.ReadFull(rc, b[:]); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n, f.sum = binary.BigEndian.Uint64(b[:8]), binary.BigEndian.Uint64(b[8:])
	f.restored++
	return nil
}

type sumSnapshot struct{ n, sum uint64 }

func (s sumSnapshot) Persist(sink raft.SnapshotSink) error {
	b := binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(nil, s.n), s.sum)
	if _, err := sink.Write(b); err != nil {
		_ = sink.Cancel()
		return err
	}
	return sink.Close()
}

func (sumSnapshot) Release() {}

// node is one raft server on a Store.
type node struct {
	r     *raft.Raft
	fsm   *sumFSM
	store *raftstore.Store
}

func startNode(t *testing.T, dir string, snaps raft.SnapshotStore) *node {
	t.Helper()
	conf := raft.DefaultConfig()
	conf.LocalID = "node-1"
	conf.HeartbeatTimeout = 50 * time.Millisecond
	conf.ElectionTimeout = 50 * time.Millisecond
	conf.LeaderLeaseTimeout = 50 * time.Millisecond
	conf.CommitTimeout = 5 * time.Millisecond
	conf.TrailingLogs = 10
	conf.SnapshotThreshold = 1 << 20 // snapshots only when the test asks
	conf.Logger = hclog.NewNullLogger()

	st := open(t, dir)
	_, trans := raft.NewInmemTransport("node-1")
	fsm := &sumFSM{}
	r, err := raft.NewRaft(conf, fsm, st, st, snaps, trans)
	if err != nil {
		st.Close()
		t.Fatalf("NewRaft: %v", err)
	}
	return &node{r: r, fsm: fsm, store: st}
}

func (n *node) stop(t *testing.T) {
	t.Helper()
	if err := n.r.Shutdown().Error(); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if err := n.store.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
}

func waitLeader(t *testing.T, r *raft.Raft) {
	t.Helper()
	timeout := time.NewTimer(10 * time.Second)
	defer timeout.Stop()
	for r.State() != raft.Leader {
		select {
		case <-r.LeaderCh():
		case <-timeout.C:
			t.Fatalf("no leader after 10s; state %v", r.State())
		}
	}
}

func apply(t *testing.T, r *raft.Raft, from, to uint64) {
	t.Helper()
	futures := make([]raft.ApplyFuture, 0, to-from+1)
	for v := from; v <= to; v++ {
		futures = append(futures, r.Apply(binary.BigEndian.AppendUint64(nil, v), 5*time.Second))
	}
	for i, f := range futures {
		if err := f.Error(); err != nil {
			t.Fatalf("Apply(%d): %v", from+uint64(i), err)
		}
	}
}

func bounds(t *testing.T, s *raftstore.Store) (first, last uint64) {
	t.Helper()
	first, err := s.FirstIndex()
	if err != nil {
		t.Fatal(err)
	}
	last, err = s.LastIndex()
	if err != nil {
		t.Fatal(err)
	}
	return first, last
}

// TestRaftRestart runs a single-node hashicorp/raft on a Store: bootstrap,
// 100 entries with a snapshot and log compaction midway, shut down, reopen,
// and check raft comes back with the same term, log and FSM state.
func TestRaftRestart(t *testing.T) {
	dir := t.TempDir()
	snaps, err := raft.NewFileSnapshotStore(t.TempDir(), 2, io.Discard)
	if err != nil {
		t.Fatal(err)
	}

	n := startNode(t, dir, snaps)
	boot := raft.Configuration{Servers: []raft.Server{{ID: "node-1", Address: "node-1"}}}
	if err := n.r.BootstrapCluster(boot).Error(); err != nil {
		t.Fatalf("BootstrapCluster: %v", err)
	}
	waitLeader(t, n.r)
	apply(t, n.r, 1, 60)
	if err := n.r.Snapshot().Error(); err != nil {
		t.Fatalf("Snapshot: %v", err)
	}
	first, last := bounds(t, n.store)
	if first <= 1 || last-first+1 < 10 {
		t.Fatalf("after snapshot bounds %d, %d; want compaction down to TrailingLogs=10", first, last)
	}
	apply(t, n.r, 61, 100)
	if err := n.r.Barrier(5 * time.Second).Error(); err != nil {
		t.Fatalf("Barrier: %v", err)
	}
	const wantSum = 100 * 101 / 2
	if cnt, sum := n.fsm.state(); cnt != 100 || sum != wantSum {
		t.Fatalf("FSM state %d, %d; want 100, %d", cnt, sum, wantSum)
	}
	term := n.r.CurrentTerm()
	first, last = bounds(t, n.store)
	if last != n.r.LastIndex() {
		t.Fatalf("store LastIndex %d, raft LastIndex %d", last, n.r.LastIndex())
	}
	n.stop(t)

	// The reopened store holds what raft left.
	st := open(t, dir)
	if f, l := bounds(t, st); f != first || l != last {
		t.Fatalf("reopened bounds %d, %d; want %d, %d", f, l, first, last)
	}
	if got, err := st.GetUint64([]byte("CurrentTerm")); err != nil || got != term {
		t.Fatalf("reopened CurrentTerm = %d, %v; want %d", got, err, term)
	}
	if ok, err := raft.HasExistingState(st, st, snaps); err != nil || !ok {
		t.Fatalf("HasExistingState = %v, %v; want true", ok, err)
	}
	var l raft.Log
	if err := st.GetLog(last, &l); err != nil || l.Type != raft.LogBarrier || l.Term != term {
		t.Fatalf("last entry %+v, %v; want the barrier in term %d", l, err, term)
	}
	if err := st.GetLog(last-1, &l); err != nil || l.Type != raft.LogCommand || binary.BigEndian.Uint64(l.Data) != 100 {
		t.Fatalf("entry before the barrier %+v, %v; want the command 100", l, err)
	}
	if l.AppendedAt.IsZero() {
		t.Fatal("entry lost AppendedAt")
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	// Raft restarts from it without bootstrapping: snapshot restored, the
	// rest of the log replayed, the same single-server configuration.
	n = startNode(t, dir, snaps)
	defer n.stop(t)
	waitLeader(t, n.r)
	if err := n.r.Barrier(5 * time.Second).Error(); err != nil {
		t.Fatalf("Barrier after restart: %v", err)
	}
	if cnt, sum := n.fsm.state(); cnt != 100 || sum != wantSum {
		t.Fatalf("FSM state after restart %d, %d; want 100, %d", cnt, sum, wantSum)
	}
	if n.fsm.restored != 1 {
		t.Fatalf("FSM restored from %d snapshots, want 1", n.fsm.restored)
	}
	if got := n.r.CurrentTerm(); got != term+1 {
		t.Fatalf("term after restart %d, want %d (one election past %d)", got, term+1, term)
	}
	cf := n.r.GetConfiguration()
	if err := cf.Error(); err != nil {
		t.Fatal(err)
	}
	if s := cf.Configuration().Servers; len(s) != 1 || s[0].ID != "node-1" {
		t.Fatalf("configuration after restart %+v, want node-1 alone", s)
	}
	apply(t, n.r, 101, 101)
	if _, l := bounds(t, n.store); l != last+3 {
		t.Fatalf("LastIndex after restart %d, want %d (no-op, barrier, entry)", l, last+3)
	}
	if f, _ := bounds(t, n.store); f != first {
		t.Fatalf("FirstIndex after restart %d, want %d", f, first)
	}
}
