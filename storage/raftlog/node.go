package raftlog

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/ordoplane/ordo/storage/raftstore"
)

// ErrNotLeader is returned by calls that only the leader may make.
var ErrNotLeader = errors.New("ordo: not the leader")

// ErrShutdown is returned after the node has shut down.
var ErrShutdown = errors.New("ordo: raft is shut down")

// Log is one committed command entry.
type Log struct {
	Index uint64
	Term  uint64
	Data  []byte
}

// Applier applies committed entries; the FSM implements it.
type Applier interface {
	// Apply applies logs in order and returns one result per log; a
	// result is handed to the Append call that proposed that log.
	Apply(logs []Log) []any
	// Snapshot captures the state at the last applied index.
	Snapshot() (Snapshot, error)
	// Restore replaces the state with a snapshot written by Snapshot.Persist.
	Restore(r io.Reader) error
}

// Snapshot is a captured state being written out.
type Snapshot interface {
	Persist(w io.Writer) error
	Release()
}

// Server is one member of the raft configuration.
type Server struct {
	ID      string `json:"ID"`
	Address string `json:"Address"`
	Voter   bool   `json:"Voter"`
}

// Config configures a Node.
type Config struct {
	// ID is this server's raft id; required.
	ID string
	// BindAddr is the TCP address raft listens on, such as 127.0.0.1:4647; required.
	BindAddr string
	// Advertise is the address others dial; default BindAddr.
	Advertise string
	// Dir holds the raft log, stable store and snapshots; required.
	Dir string
	// Bootstrap forms a one-server cluster on first start (dev mode).
	Bootstrap bool
	// HeartbeatTimeout and ElectionTimeout; default 1s each (raft's).
	HeartbeatTimeout time.Duration
	ElectionTimeout  time.Duration
	// LeaderLeaseTimeout; default 500ms.
	LeaderLeaseTimeout time.Duration
	// SnapshotThreshold is how many entries trigger a snapshot; default 8192.
	SnapshotThreshold uint64
	// TrailingLogs kept after a snapshot; default 10240.
	TrailingLogs uint64
	// LogOutput receives raft's own log lines at warn and above; default stderr.
	LogOutput io.Writer
	// Registerer receives the raft metrics; nil registers none.
	Registerer prometheus.Registerer
	// NoSync skips fsync on the raft log; for tests only.
	NoSync bool
	// Autopilot tunes autopilot (autopilot.go); the zero value takes its defaults.
	Autopilot AutopilotConfig
	// PeerStats fetches another server's PeerStats for autopilot; nil
	// leaves every other server unhealthy, so none is ever promoted.
	PeerStats StatsFetcher
	// Logger receives ordo's own lines about membership and autopilot;
	// default slog.Default().
	Logger *slog.Logger
}

// DefaultConfig returns a Config with every default filled in.
func DefaultConfig() Config {
	return Config{
		HeartbeatTimeout:   time.Second,
		ElectionTimeout:    time.Second,
		LeaderLeaseTimeout: 500 * time.Millisecond,
		SnapshotThreshold:  8192,
		TrailingLogs:       10240,
	}
}

// Validate reports a Config that cannot work.
func (c Config) Validate() error {
	switch {
	case c.ID == "":
		return errors.New("raftlog: ID is required")
	case c.BindAddr == "":
		return errors.New("raftlog: BindAddr is required")
	case c.Dir == "":
		return errors.New("raftlog: Dir is required")
	case c.HeartbeatTimeout <= 0 || c.ElectionTimeout <= 0 || c.LeaderLeaseTimeout <= 0:
		return errors.New("raftlog: timeouts must be positive")
	}
	return nil
}

// Node is a running raft member.
type Node struct {
	cfg       Config
	raft      *raft.Raft
	store     *raftstore.Store
	transport *raft.NetworkTransport
	snaps     raft.SnapshotStore
	leaderCh  chan bool
	metrics   *metrics
	// read tracks leader readiness and confirms leadership for reads (read.go).
	read readiness
	// shutdown closes when Shutdown starts.
	shutdown     chan struct{}
	shutdownOnce sync.Once
	// pilot is autopilot and its delegate (autopilot.go); membership
	// serialises the configuration changes made through this Node.
	pilot      *pilot
	membership sync.Mutex
}

// Open starts a raft node.
func Open(cfg Config, app Applier) (*Node, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Advertise == "" {
		cfg.Advertise = cfg.BindAddr
	}
	if cfg.LogOutput == nil {
		cfg.LogOutput = os.Stderr
	}
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("raft dir: %w", err)
	}
	logger := hclog.New(&hclog.LoggerOptions{Name: "raft", Level: hclog.Warn, Output: cfg.LogOutput})

	scfg := raftstore.DefaultConfig()
	scfg.NoSync = cfg.NoSync
	store, err := raftstore.Open(filepath.Join(cfg.Dir, "log"), scfg)
	if err != nil {
		return nil, err
	}
	n := &Node{cfg: cfg, store: store, leaderCh: make(chan bool, 16), metrics: newMetrics(cfg.Registerer),
		shutdown: make(chan struct{})}
	n.read.mu.changed = make(chan struct{})
	cache, err := raft.NewLogCache(4096, timedLogStore{LogStore: store, h: n.metrics.store})
	if err != nil {
		store.Close()
		return nil, err
	}
	snaps, err := raft.NewFileSnapshotStoreWithLogger(filepath.Join(cfg.Dir, "snapshots"), 2, logger)
	if err != nil {
		store.Close()
		return nil, fmt.Errorf("snapshot store: %w", err)
	}
	var adv net.Addr
	if a, err := net.ResolveTCPAddr("tcp", cfg.Advertise); err != nil {
		store.Close()
		return nil, fmt.Errorf("advertise %q: %w", cfg.Advertise, err)
	} else if a.Port != 0 {
		adv = a // port 0: advertise the port the listener gets
	}
	trans, err := raft.NewTCPTransportWithConfig(cfg.BindAddr, adv, &raft.NetworkTransportConfig{
		MaxPool: 3, Timeout: 10 * time.Second, Logger: logger,
		// Pipelining combines badly with batching (MEASURED.md): followers fell far behind.
		MaxRPCsInFlight: 1,
	})
	if err != nil {
		store.Close()
		return nil, fmt.Errorf("raft transport on %s: %w", cfg.BindAddr, err)
	}
	cfg.Advertise = string(trans.LocalAddr())

	n.transport, n.snaps = trans, snaps
	n.cfg.Advertise = cfg.Advertise
	rc := raft.DefaultConfig()
	rc.LocalID = raft.ServerID(cfg.ID)
	rc.Logger = logger
	rc.HeartbeatTimeout = cfg.HeartbeatTimeout
	rc.ElectionTimeout = cfg.ElectionTimeout
	rc.LeaderLeaseTimeout = cfg.LeaderLeaseTimeout
	rc.SnapshotThreshold = cfg.SnapshotThreshold
	rc.TrailingLogs = cfg.TrailingLogs
	rc.MaxAppendEntries = 1024
	rc.BatchApplyCh = true
	// raft's notifications go through watchLeadership (read.go), which
	// passes a gain on to LeaderChanges once the new term's barrier applied.
	raftNotify := make(chan bool, 1)
	rc.NotifyCh = raftNotify

	hasState, err := raft.HasExistingState(cache, store, snaps)
	if err != nil {
		store.Close()
		return nil, fmt.Errorf("raft state: %w", err)
	}
	r, err := raft.NewRaft(rc, &fsm{app: app, m: n.metrics}, cache, store, snaps, trans)
	if err != nil {
		trans.Close()
		store.Close()
		return nil, fmt.Errorf("start raft: %w", err)
	}
	n.raft = r
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	n.pilot = newPilot(n, cfg.Autopilot, cfg.Logger.With("component", "autopilot"), cfg.Registerer, logger)
	go n.watchLeadership(raftNotify)
	if cfg.Bootstrap && !hasState {
		if err := n.BootstrapCluster([]Server{{ID: cfg.ID, Address: cfg.Advertise, Voter: true}}); err != nil {
			n.Shutdown()
			return nil, err
		}
	}
	return n, nil
}

// ID returns this node's raft id.
func (n *Node) ID() string { return n.cfg.ID }

// Address returns the raft address others dial.
func (n *Node) Address() string { return n.cfg.Advertise }

// HasState reports whether this node has ever been part of a cluster.
func (n *Node) HasState() bool {
	idx, err := n.store.LastIndex()
	return err == nil && idx > 0
}

// BootstrapCluster forms a cluster of servers; every server given the same
// list may call it.
func (n *Node) BootstrapCluster(servers []Server) error {
	var c raft.Configuration
	for _, s := range servers {
		suf := raft.Voter
		if !s.Voter {
			suf = raft.Nonvoter
		}
		c.Servers = append(c.Servers, raft.Server{ID: raft.ServerID(s.ID), Address: raft.ServerAddress(s.Address), Suffrage: suf})
	}
	if err := n.raft.BootstrapCluster(c).Error(); err != nil && !errors.Is(err, raft.ErrCantBootstrap) {
		return fmt.Errorf("bootstrap: %w", err)
	}
	return nil
}

// Append proposes data and waits until it is applied on this node, returning
// the applier's result and the entry's index. Only the leader accepts.
func (n *Node) Append(ctx context.Context, data []byte) (any, uint64, error) {
	timeout := 30 * time.Second
	if dl, ok := ctx.Deadline(); ok {
		timeout = time.Until(dl)
	}
	start := time.Now()
	f := n.raft.Apply(data, timeout)
	// raft's timeout covers only enqueueing: a committed entry whose FSM
	// goroutine stops at shutdown never answers, so also stop waiting on
	// the caller's context and on shutdown.
	done := make(chan error, 1)
	go func() { done <- f.Error() }()
	select {
	case err := <-done:
		if err != nil {
			return nil, 0, mapErr(err)
		}
	case <-ctx.Done():
		return nil, 0, fmt.Errorf("append: outcome unknown: %w", ctx.Err())
	case <-n.shutdown:
		return nil, 0, ErrShutdown
	}
	n.metrics.commit.Observe(time.Since(start).Seconds())
	return f.Response(), f.Index(), nil
}

func mapErr(err error) error {
	switch {
	case errors.Is(err, raft.ErrNotLeader), errors.Is(err, raft.ErrLeadershipLost), errors.Is(err, raft.ErrLeadershipTransferInProgress):
		return fmt.Errorf("%w: %v", ErrNotLeader, err)
	case errors.Is(err, raft.ErrRaftShutdown):
		return ErrShutdown
	}
	return fmt.Errorf("raft: %w", err)
}

// IsLeader reports whether this node is the leader.
func (n *Node) IsLeader() bool { return n.raft.State() == raft.Leader }

// Leader returns the current leader's raft id and address, empty when unknown.
func (n *Node) Leader() (id, addr string) {
	a, i := n.raft.LeaderWithID()
	return string(i), string(a)
}

// LeaderChanges delivers true when this node gains leadership, once it has
// applied every entry of earlier terms (read.go), and false when it loses
// it. One consumer.
func (n *Node) LeaderChanges() <-chan bool { return n.leaderCh }

// LastContact returns when this node last heard from the leader (now on the leader).
func (n *Node) LastContact() time.Time {
	if n.IsLeader() {
		return time.Now()
	}
	return n.raft.LastContact()
}

// State returns raft's state name: Follower, Candidate, Leader or Shutdown.
func (n *Node) State() string { return n.raft.State().String() }

// AppliedIndex returns the last index applied to the FSM.
func (n *Node) AppliedIndex() uint64 { return n.raft.AppliedIndex() }

// Stats returns raft's internal statistics.
func (n *Node) Stats() map[string]string { return n.raft.Stats() }

// Servers returns the current raft configuration.
func (n *Node) Servers() ([]Server, error) {
	f := n.raft.GetConfiguration()
	if err := f.Error(); err != nil {
		return nil, mapErr(err)
	}
	var out []Server
	for _, s := range f.Configuration().Servers {
		out = append(out, Server{ID: string(s.ID), Address: string(s.Address), Voter: s.Suffrage == raft.Voter})
	}
	return out, nil
}

// Barrier waits until every entry committed before it is applied locally; leader only.
func (n *Node) Barrier(ctx context.Context) error {
	timeout := 30 * time.Second
	if dl, ok := ctx.Deadline(); ok {
		timeout = time.Until(dl)
	}
	if err := n.raft.Barrier(timeout).Error(); err != nil {
		return mapErr(err)
	}
	return nil
}

// TakeSnapshot forces a raft snapshot.
func (n *Node) TakeSnapshot() error {
	if err := n.raft.Snapshot().Error(); err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	return nil
}

// Shutdown stops raft and closes its stores.
func (n *Node) Shutdown() error {
	n.shutdownOnce.Do(func() { close(n.shutdown) })
	err := n.raft.Shutdown().Error()
	if cerr := n.transport.Close(); err == nil {
		err = cerr
	}
	if cerr := n.store.Close(); err == nil {
		err = cerr
	}
	n.metrics.unregister()
	if n.pilot != nil {
		n.pilot.close()
	}
	return err
}
