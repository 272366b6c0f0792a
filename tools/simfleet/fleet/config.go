package fleet

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"
)

// Config configures a Fleet. Zero fields take the defaults DefaultConfig
// states.
type Config struct {
	// Servers lists the servers' HTTP addresses (host:port or http:// URLs);
	// required. Node i starts on Servers[i % len] and moves to the next one
	// after a transport error; followers forward to the leader.
	Servers []string
	// Nodes is how many nodes to simulate; default 1.
	Nodes int
	// NamePrefix names the nodes <prefix>-<index>; default "sim".
	NamePrefix string
	// Seed derives node ids, which allocations fail and which nodes
	// Disconnect picks; default 1. Two fleets against one cluster need
	// different seeds (and prefixes).
	Seed uint64

	// Datacenter, NodeClass and NodePool are registered as given;
	// defaults "dc1", "" and "default".
	Datacenter, NodeClass, NodePool string
	// CPU (MHz), MemoryMB and DiskMB are each node's fingerprinted
	// resources; defaults 4000, 8192 and 100000.
	CPU, MemoryMB, DiskMB int
	// Drivers are reported detected and healthy; default exec and mock.
	Drivers []string

	// RunFor is how long an allocation runs before it completes (the mock
	// driver's run_for); 0 runs it until the servers stop it.
	RunFor time.Duration
	// FailRate is the fraction of allocations, in [0, 1], that fail on start.
	FailRate float64

	// HeartbeatJitter is the largest fraction of the answered TTL by which
	// a heartbeat comes early, in [0, 1); default 0.05.
	HeartbeatJitter float64
	// UpdateBatch is how long a node gathers allocation updates before it
	// sends them in one call; default 200ms (Nomad's client batches as long).
	UpdateBatch time.Duration
	// WatchWait is the wait of each allocation long-poll; default 5m.
	WatchWait time.Duration
	// StartParallel bounds how many node sessions start (register, first
	// report, first heartbeat) at once across the fleet; default 64.
	StartParallel int
	// CallConns caps the connections per server of register, heartbeat
	// and update calls; default 512.
	CallConns int
	// RequestTimeout bounds each call other than a long-poll, which gets
	// WatchWait plus this; default 30s.
	RequestTimeout time.Duration
	// RetryBackoff is the first delay after a failed call; it doubles up
	// to 32 times as long, with jitter; default 1s.
	RetryBackoff time.Duration

	// Logger receives a line per failed call at debug level; default slog.Default().
	Logger *slog.Logger
}

// DefaultConfig returns the defaults, with no servers.
func DefaultConfig() Config {
	return Config{
		Nodes:           1,
		NamePrefix:      "sim",
		Seed:            1,
		Datacenter:      "dc1",
		NodePool:        "default",
		CPU:             4000,
		MemoryMB:        8192,
		DiskMB:          100000,
		Drivers:         []string{"exec", "mock"},
		HeartbeatJitter: 0.05,
		UpdateBatch:     200 * time.Millisecond,
		WatchWait:       5 * time.Minute,
		StartParallel:   64,
		CallConns:       512,
		RequestTimeout:  30 * time.Second,
		RetryBackoff:    time.Second,
	}
}

// withDefaults fills zero fields from DefaultConfig.
func (c Config) withDefaults() Config {
	d := DefaultConfig()
	if c.Nodes == 0 {
		c.Nodes = d.Nodes
	}
	if c.NamePrefix == "" {
		c.NamePrefix = d.NamePrefix
	}
	if c.Seed == 0 {
		c.Seed = d.Seed
	}
	if c.Datacenter == "" {
		c.Datacenter = d.Datacenter
	}
	if c.NodePool == "" {
		c.NodePool = d.NodePool
	}
	if c.CPU == 0 {
		c.CPU = d.CPU
	}
	if c.MemoryMB == 0 {
		c.MemoryMB = d.MemoryMB
	}
	if c.DiskMB == 0 {
		c.DiskMB = d.DiskMB
	}
	if c.Drivers == nil {
		c.Drivers = d.Drivers
	}
	if c.HeartbeatJitter == 0 {
		c.HeartbeatJitter = d.HeartbeatJitter
	}
	if c.UpdateBatch == 0 {
		c.UpdateBatch = d.UpdateBatch
	}
	if c.WatchWait == 0 {
		c.WatchWait = d.WatchWait
	}
	if c.StartParallel == 0 {
		c.StartParallel = d.StartParallel
	}
	if c.CallConns == 0 {
		c.CallConns = d.CallConns
	}
	if c.RequestTimeout == 0 {
		c.RequestTimeout = d.RequestTimeout
	}
	if c.RetryBackoff == 0 {
		c.RetryBackoff = d.RetryBackoff
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

// Validate reports a Config that cannot work, after defaults are applied.
func (c Config) Validate() error {
	switch {
	case len(c.Servers) == 0:
		return errors.New("simfleet: at least one server address is required")
	case c.Nodes < 1:
		return fmt.Errorf("simfleet: Nodes %d must be at least 1", c.Nodes)
	case c.CPU < 0, c.MemoryMB < 0, c.DiskMB < 0:
		return errors.New("simfleet: resources must not be negative")
	case c.RunFor < 0:
		return errors.New("simfleet: RunFor must not be negative")
	case c.FailRate < 0 || c.FailRate > 1:
		return fmt.Errorf("simfleet: FailRate %v is not in [0, 1]", c.FailRate)
	case c.HeartbeatJitter < 0 || c.HeartbeatJitter >= 1:
		return fmt.Errorf("simfleet: HeartbeatJitter %v is not in [0, 1)", c.HeartbeatJitter)
	case c.UpdateBatch < 0, c.WatchWait < 0, c.RequestTimeout < 0, c.RetryBackoff < 0:
		return errors.New("simfleet: durations must not be negative")
	case c.StartParallel < 1, c.CallConns < 1:
		return errors.New("simfleet: StartParallel and CallConns must be at least 1")
	}
	for _, s := range c.Servers {
		if strings.TrimSpace(s) == "" {
			return errors.New("simfleet: empty server address")
		}
	}
	return nil
}

// baseURL turns a server address into a URL prefix without a trailing slash.
func baseURL(addr string) string {
	addr = strings.TrimRight(strings.TrimSpace(addr), "/")
	if strings.HasPrefix(addr, "http://") || strings.HasPrefix(addr, "https://") {
		return addr
	}
	return "http://" + addr
}
