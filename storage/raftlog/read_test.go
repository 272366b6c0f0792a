package raftlog

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// gatedApplier counts applied entries; while gate is set and not closed,
// Apply waits.
type gatedApplier struct {
	gate chan struct{}
	mu   sync.Mutex
	n    int
}

func (a *gatedApplier) Apply(logs []Log) []any {
	if a.gate != nil {
		<-a.gate
	}
	a.mu.Lock()
	a.n += len(logs)
	a.mu.Unlock()
	return make([]any, len(logs))
}

func (a *gatedApplier) applied() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.n
}

func (a *gatedApplier) Snapshot() (Snapshot, error) { return emptySnapshot{}, nil }
func (a *gatedApplier) Restore(io.Reader) error     { return nil }

type emptySnapshot struct{}

func (emptySnapshot) Persist(io.Writer) error { return nil }
func (emptySnapshot) Release()                {}

func openTestNode(t *testing.T, dir string, app Applier) *Node {
	t.Helper()
	cfg := DefaultConfig()
	cfg.ID, cfg.BindAddr, cfg.Dir, cfg.Bootstrap, cfg.NoSync = "n1", "127.0.0.1:0", dir, true, true
	cfg.HeartbeatTimeout, cfg.ElectionTimeout, cfg.LeaderLeaseTimeout = 100*time.Millisecond, 100*time.Millisecond, 50*time.Millisecond
	cfg.LogOutput = io.Discard
	n, err := Open(cfg, app)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func awaitLeading(t *testing.T, ch <-chan bool, what string) {
	t.Helper()
	select {
	case v := <-ch:
		if !v {
			t.Fatalf("%s: got a leadership loss", what)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: no leadership within 10s", what)
	}
}

// TestLeaderServesOnlyOnceEarlierEntriesApplied: a server that wins an
// election while entries of earlier terms are still unapplied is not
// ready: reads and decisions wait, and leader-only processors are not told
// it leads, until the term's barrier has applied behind them.
func TestLeaderServesOnlyOnceEarlierEntriesApplied(t *testing.T) {
	dir := t.TempDir()
	n := openTestNode(t, dir, &gatedApplier{})
	awaitLeading(t, n.LeaderChanges(), "first start")
	for range 5 {
		if _, _, err := n.Append(context.Background(), []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	if err := n.ConsistentRead(context.Background()); err != nil {
		t.Fatalf("consistent read on a ready leader: %v", err)
	}
	if err := n.Shutdown(); err != nil {
		t.Fatal(err)
	}

	// Restarted, it replays the 5 entries through an applier held shut.
	app := &gatedApplier{gate: make(chan struct{})}
	n = openTestNode(t, dir, app)
	defer n.Shutdown()
	select {
	case <-n.raft.LeaderCh(): // raft's own view: leading, nothing applied yet
	case <-time.After(10 * time.Second):
		t.Fatal("no election within 10s")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	err := n.ConsistentRead(ctx)
	cancel()
	if !errors.Is(err, ErrNotLeader) {
		t.Fatalf("read before earlier entries applied = %v, want ErrNotLeader", err)
	}
	select {
	case <-n.LeaderChanges():
		t.Fatal("leadership reported before earlier entries applied")
	default:
	}
	close(app.gate)
	awaitLeading(t, n.LeaderChanges(), "after the replay")
	if got := app.applied(); got < 5 {
		t.Fatalf("ready with %d of 5 earlier entries applied", got)
	}
	if err := n.ConsistentRead(context.Background()); err != nil {
		t.Fatalf("consistent read once ready: %v", err)
	}
}

// TestReadsConfirmWithAQuorumUnlessSoleVoter: a leader of three voters
// confirms each read with a heartbeat round; a sole voter needs none.
func TestReadsConfirmWithAQuorumUnlessSoleVoter(t *testing.T) {
	var nodes []*Node
	var servers []Server
	for i := range 3 {
		cfg := DefaultConfig()
		cfg.ID, cfg.BindAddr, cfg.Dir, cfg.NoSync = fmt.Sprintf("n%d", i), "127.0.0.1:0", t.TempDir(), true
		cfg.HeartbeatTimeout, cfg.ElectionTimeout, cfg.LeaderLeaseTimeout = 100*time.Millisecond, 100*time.Millisecond, 50*time.Millisecond
		cfg.LogOutput = io.Discard
		n, err := Open(cfg, &gatedApplier{})
		if err != nil {
			t.Fatal(err)
		}
		defer n.Shutdown()
		nodes = append(nodes, n)
		servers = append(servers, Server{ID: n.ID(), Address: n.Address(), Voter: true})
	}
	for _, n := range nodes {
		if err := n.BootstrapCluster(servers); err != nil {
			t.Fatal(err)
		}
	}
	leader := make(chan *Node, 3)
	done := make(chan struct{})
	defer close(done)
	for _, n := range nodes {
		go func() {
			select {
			case v := <-n.LeaderChanges():
				if v {
					leader <- n
				}
			case <-done:
			}
		}()
	}
	var l *Node
	select {
	case l = <-leader:
	case <-time.After(10 * time.Second):
		t.Fatal("no ready leader within 10s")
	}
	before := testutil.ToFloat64(l.metrics.rounds)
	if err := l.ConsistentRead(context.Background()); err != nil {
		t.Fatalf("consistent read on the leader of three: %v", err)
	}
	if got := testutil.ToFloat64(l.metrics.rounds) - before; got != 1 {
		t.Fatalf("a read on the leader of three ran %v confirmation rounds, want 1", got)
	}

	solo := openTestNode(t, t.TempDir(), &gatedApplier{})
	defer solo.Shutdown()
	awaitLeading(t, solo.LeaderChanges(), "a sole voter")
	if err := solo.ConsistentRead(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := testutil.ToFloat64(solo.metrics.rounds); got != 0 {
		t.Fatalf("a sole voter ran %v confirmation rounds, want 0", got)
	}
}
