package agent

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/ordoplane/ordo/commands/httpapi/httplimit"
	"github.com/ordoplane/ordo/history/timetravel"
	"github.com/ordoplane/ordo/processors/mirror"
	"github.com/ordoplane/ordo/processors/plan"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/storage/raftlog"
)

// Config configures an agent.
type Config struct {
	// Dev runs one server with data in a temporary directory, bootstrapped at once.
	Dev bool `hcl:"-" json:"Dev"`
	// Server runs the server role.
	Server bool `json:"Server"`
	// Client configures the client role (client.go); off by default.
	Client ClientConfig `json:"Client"`
	// Name is the node name shown in the API; default the hostname.
	Name string `json:"Name"`
	// Region and Datacenter are the server's, as Nomad's agent reports
	// them (/v1/agent/self, /v1/agent/members, /v1/regions); ordo runs one
	// region. Default "global" and "dc1".
	Region     string `json:"Region"`
	Datacenter string `json:"Datacenter"`
	// DataDir holds the server's state; required unless Dev.
	DataDir string `json:"DataDir"`
	// HTTPAddr is the API's listen address; default 127.0.0.1:4646.
	HTTPAddr string `json:"HTTPAddr"`
	// RaftAddr is raft's listen address; default 127.0.0.1:4647.
	RaftAddr string `json:"RaftAddr"`
	// RaftAdvertise is the raft address other servers dial, when it is not
	// RaftAddr (a proxy or NAT in front of it); default RaftAddr.
	RaftAdvertise string `json:"RaftAdvertise,omitempty"`
	// BootstrapExpect is how many servers form the cluster; 1 bootstraps alone.
	BootstrapExpect int `json:"BootstrapExpect"`
	// Join lists other servers' HTTP addresses to join through.
	Join []string `json:"Join"`
	// ClusterSecret is the secret every server of the cluster shares and
	// presents to join, and that authorises membership changes
	// (cluster.go, docs/operations.md); required with BootstrapExpect > 1
	// or Join, random in -dev. Never shown.
	ClusterSecret string `json:"-"`
	// Autopilot tunes the promotion of joined servers, health reports and
	// dead-server cleanup (the agent file's autopilot block).
	Autopilot raftlog.AutopilotConfig `json:"Autopilot"`
	// JoinInterval is how often joining is retried; default 1s.
	JoinInterval time.Duration `json:"JoinInterval"`
	// RaftTimeout sets raft's heartbeat and election timeouts (the
	// leader lease is half); default DefaultRaftTimeout, at least 10ms.
	// Lower fails over sooner after a leader dies, and elects needlessly
	// on a machine that stalls for longer than it.
	RaftTimeout time.Duration `json:"RaftTimeout"`
	// SnapshotThreshold is how many entries trigger a raft snapshot; default 8192.
	SnapshotThreshold uint64 `json:"SnapshotThreshold"`
	// TrailingLogs is how many entries raft keeps after a snapshot; default 10240.
	TrailingLogs uint64 `json:"TrailingLogs"`
	// HeartbeatMinTTL is the shortest heartbeat TTL handed to nodes; default 10s.
	HeartbeatMinTTL time.Duration `json:"HeartbeatMinTTL"`
	// HeartbeatGrace is added to a node's TTL before it counts as missed; default 10s.
	HeartbeatGrace time.Duration `json:"HeartbeatGrace"`
	// MaxHeartbeatsPerSecond bounds the fleet's heartbeat rate; default 50.
	MaxHeartbeatsPerSecond float64 `json:"MaxHeartbeatsPerSecond"`
	// FailoverHeartbeatTTL is every node's TTL after a leader election; default 5m.
	FailoverHeartbeatTTL time.Duration `json:"FailoverHeartbeatTTL"`
	// HTTP bounds the API's connections (the agent file's limits block,
	// httplimit.Config): header 10s, body 30s, write 60s and idle 90s
	// timeouts, and 100 connections per client address; zero fields take
	// these defaults.
	HTTP httplimit.Config `json:"HTTP"`
	// NoSync skips fsync of the raft log; for tests and benchmarks only.
	NoSync bool `json:"NoSync"`
	// UnconfirmedReads answers default reads without confirming
	// leadership (httpapi.Config.UnconfirmedReads): not linearizable, for
	// benchmarks comparing the read paths only; no flag or file sets it.
	UnconfirmedReads bool `hcl:"-" json:"UnconfirmedReads,omitempty"`
	// Projections are the projections the server maintains; default
	// all.Projections(). Tests pass a set with a changed version.
	Projections []projections.Projection `hcl:"-" json:"-"`
	// Scheduler tunes the eval broker, workers and plan applier.
	Scheduler SchedulerConfig `json:"Scheduler"`
	// GC tunes garbage collection (gc.go, docs/gc.md).
	GC GCConfig `json:"GC"`
	// DisablePeriodic runs no periodic launcher on this server: periodic
	// jobs launch only by POST /v1/job/:id/periodic/force.
	DisablePeriodic bool `json:"DisablePeriodic"`
	// TimeTravel tunes the versions store behind reads at_index and
	// at_time (history/timetravel); the zero value keeps every version.
	TimeTravel timetravel.Options `json:"TimeTravel"`
	// Mirror, when set, mirrors the log to Kafka from the leader
	// (processors/mirror; the agent file's mirror block).
	Mirror *mirror.Settings `json:"Mirror,omitempty"`
	// ACL is the acl block (acl.go); off by default and in -dev.
	ACL ACLConfig `json:"ACL"`
	// Keyring tunes the root keyring (keyring.go).
	Keyring KeyringConfig `json:"Keyring"`
	// Launcher tunes the launcher (launcher.go, docs/launcher.md).
	Launcher LauncherConfig `json:"Launcher"`
	// Capacity maps node pools to launcher labels (capacity.go,
	// docs/capacity.md); LocalDriver configures the launcher's local
	// driver.
	Capacity    CapacityConfig    `json:"Capacity"`
	LocalDriver LocalDriverConfig `json:"LocalDriver"`
	// Logger; default slog.Default().
	Logger *slog.Logger `json:"-"`
	// RaftLogOutput receives raft's own warnings; default stderr.
	RaftLogOutput io.Writer `json:"-"`
	// Extra holds the agent file's blocks later features read (acl).
	Extra map[string]any `json:"Extra,omitempty"`
}

// DefaultRaftTimeout is raft's heartbeat and election timeout unless
// configured: half Nomad's 1s, so that a dead leader is replaced in about
// a second (one to two timeouts) rather than two to four; the
// linearizability run saw no needless election at it with the servers
// pinned to one loaded core.
const DefaultRaftTimeout = 500 * time.Millisecond

// DefaultConfig returns the defaults of a server agent.
func DefaultConfig() Config {
	return Config{
		Server:       true,
		HTTPAddr:     "127.0.0.1:4646",
		RaftAddr:     "127.0.0.1:4647",
		JoinInterval: time.Second,
		RaftTimeout:  DefaultRaftTimeout,
	}
}

// DevConfig returns the configuration of `ordo agent -dev`.
func DevConfig() Config {
	c := DefaultConfig()
	c.Dev = true
	c.BootstrapExpect = 1
	return c
}

// Validate reports a Config that cannot work.
func (c Config) Validate() error {
	switch {
	case !c.Server && !c.Client.Enabled:
		return errors.New("agent: no role to run; pass -server, -client or -dev")
	case !c.Server:
		if c.DataDir == "" {
			return errors.New("agent: -data-dir is required")
		}
		return c.Client.validate(false)
	case c.DataDir == "" && !c.Dev:
		return errors.New("agent: -data-dir is required outside -dev")
	case c.HTTPAddr == "":
		return errors.New("agent: -http-addr is required")
	case c.RaftAddr == "":
		return errors.New("agent: -raft-addr is required")
	case c.BootstrapExpect < 0:
		return errors.New("agent: -bootstrap-expect must not be negative")
	case c.RaftTimeout != 0 && c.RaftTimeout < 10*time.Millisecond:
		return fmt.Errorf("agent: -raft-timeout %v is below 10ms", c.RaftTimeout)
	}
	if c.Mirror != nil {
		if err := c.Mirror.Validate(); err != nil {
			return fmt.Errorf("agent: %w", err)
		}
	}
	if err := c.validateCluster(); err != nil { // cluster.go
		return err
	}
	if err := c.HTTP.Validate(); err != nil {
		return fmt.Errorf("agent: %w", err)
	}
	if err := c.ACL.Validate(); err != nil {
		return fmt.Errorf("agent: %w", err)
	}
	return c.Client.validate(true)
}

// SchedulerConfig tunes scheduling.
type SchedulerConfig struct {
	// Disabled runs no eval feed, workers or plan applier on this server,
	// like Nomad's num_schedulers = 0: evals stay pending.
	Disabled bool `json:"Disabled"`
	// Workers is how many scheduler workers run on the leader; default one per core.
	Workers int `json:"Workers"`
	// SyncLimit is how long a worker waits for its state to reach an eval (N2); default 5s.
	SyncLimit time.Duration `json:"SyncLimit"`
	// NackTimeout is how long a worker may hold an eval; default 60s.
	NackTimeout time.Duration `json:"NackTimeout"`
	// NackDelay delays a nacked eval's first redelivery (later ones wait 20×); default 1s.
	NackDelay time.Duration `json:"NackDelay"`
	// PlanRejectionTracker is Nomad's server.plan_rejection_tracker
	// block: a node whose plans are rejected too often is marked
	// ineligible (N11); off by default, as in Nomad.
	PlanRejectionTracker PlanRejectionTracker `json:"PlanRejectionTracker"`
}

// PlanRejectionTracker configures the plan rejection tracker (N11).
type PlanRejectionTracker struct {
	// Enabled turns it on; default off.
	Enabled bool `json:"Enabled"`
	// NodeThreshold is how many rejections of one node within NodeWindow
	// mark it ineligible; default 15 (Nomad's 100 counts its retries).
	NodeThreshold int `json:"NodeThreshold"`
	// NodeWindow is how far back rejections count; default 10m.
	NodeWindow time.Duration `json:"NodeWindow"`
}

func (c *SchedulerConfig) defaults() {
	if c.SyncLimit <= 0 {
		c.SyncLimit = 5 * time.Second
	}
	if c.NackTimeout <= 0 {
		c.NackTimeout = 60 * time.Second
	}
	if c.NackDelay <= 0 {
		c.NackDelay = time.Second
	}
	def := plan.DefaultTrackerConfig()
	if c.PlanRejectionTracker.NodeThreshold <= 0 {
		c.PlanRejectionTracker.NodeThreshold = def.Threshold
	}
	if c.PlanRejectionTracker.NodeWindow <= 0 {
		c.PlanRejectionTracker.NodeWindow = def.Window
	}
}
