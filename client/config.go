package client

import (
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ordoplane/ordo/client/csi"
	"github.com/ordoplane/ordo/client/driver"
	"github.com/ordoplane/ordo/clock"
	"github.com/ordoplane/ordo/events"
)

// Config configures a client agent.
type Config struct {
	// DataDir holds the client's state (client/) and the allocation
	// directories (alloc/). Required.
	DataDir string
	// Servers are the servers' HTTP addresses (host:port or URLs). Required.
	Servers []string
	// NodeName is the node's name; default the hostname.
	NodeName string
	// Datacenter is the node's datacenter; default "dc1".
	Datacenter string
	// NodeClass and NodePool place the node; NodePool defaults to "default".
	NodeClass string
	NodePool  string
	// Meta is the node's metadata.
	Meta map[string]string
	// Reserved is the part of the node's resources kept from allocations.
	Reserved events.NodeResources
	// HTTPAddr is the address the node advertises; optional.
	HTTPAddr string
	// NetworkAddress is the node's default address, where tasks' ports
	// are reached; empty: the first IPv4 address of NetworkInterface, or
	// the machine's first non-loopback IPv4 address (network.go). A dev
	// agent sets 127.0.0.1.
	NetworkAddress string
	// NetworkInterface names the interface of the default address.
	NetworkInterface string
	// MinDynamicPort and MaxDynamicPort bound the ports the scheduler
	// picks for dynamic ports; defaults 20000 and 32000, as Nomad's.
	MinDynamicPort, MaxDynamicPort int
	// ReservedPorts are host ports kept from allocations
	// ("22,80,8000-8100").
	ReservedPorts string
	// HostNetworks are further addresses ports may ask for by name.
	HostNetworks []HostNetwork
	// HostVolumes are host directories offered to jobs by name; each
	// path must be an existing directory when the client starts.
	HostVolumes []HostVolume
	// Drivers are the task drivers the node offers. The caller owns them
	// (and closes them after Run returns).
	Drivers []driver.Driver

	// Clock is the client's time source; default clock.System.
	Clock clock.Clock
	// Seed seeds the heartbeat and retry jitter; 0 derives it from the
	// node id.
	Seed uint64
	// UpdateInterval is how long allocation changes are coalesced before
	// they are sent; default 200ms.
	UpdateInterval time.Duration
	// WatchWait is the wait of the blocking allocation query; default 5m.
	WatchWait time.Duration
	// RetryMin and RetryMax bound the backoff between failed calls to the
	// servers; defaults 500ms and 30s.
	RetryMin, RetryMax time.Duration
	// RequestTimeout bounds each call that is not a blocking query;
	// default 10s.
	RequestTimeout time.Duration
	// GCMaxAllocs is how many terminal allocations keep their directory
	// and record; older ones are removed. Default 50.
	GCMaxAllocs int
	// DestroyOnShutdown kills every task when Run returns, as a dev agent
	// does (its data directory is about to be removed); otherwise tasks
	// keep running for the next client process to re-attach.
	DestroyOnShutdown bool
	// ProcRoot and OSRelease are where the fingerprint reads; defaults
	// /proc and /etc/os-release.
	ProcRoot  string
	OSRelease string
	// LogMaxBytes and LogMaxFiles bound each task's log files; defaults
	// 10 MiB and 10.
	LogMaxBytes int64
	LogMaxFiles int
	// CSI calls the CSI plugins the node's tasks serve (client/csi); nil
	// runs no plugin and publishes no CSI volume.
	CSI *csi.Manager
	// CSIFingerprintInterval is how often the plugins are fingerprinted;
	// default 5s.
	CSIFingerprintInterval time.Duration
	// DriverFingerprintInterval is how often the drivers are fingerprinted
	// again after registration (a docker daemon that starts or stops);
	// default 15s.
	DriverFingerprintInterval time.Duration
	// HTTPClient talks to the servers; default a new http.Client.
	HTTPClient *http.Client
	// Logger; default slog.Default().
	Logger *slog.Logger
	// Registerer receives the client's metrics; nil registers none.
	Registerer prometheus.Registerer
}

// DefaultConfig returns the defaults of the optional fields.
func DefaultConfig() Config {
	return Config{
		Datacenter:     "dc1",
		NodePool:       "default",
		Clock:          clock.System{},
		UpdateInterval: 200 * time.Millisecond,
		WatchWait:      5 * time.Minute,
		RetryMin:       500 * time.Millisecond,
		RetryMax:       30 * time.Second,
		RequestTimeout: 10 * time.Second,
		GCMaxAllocs:    50,
		LogMaxBytes:    10 << 20,
		LogMaxFiles:    10,
	}
}

// withDefaults fills zero fields from DefaultConfig.
func (c Config) withDefaults() Config {
	d := DefaultConfig()
	if c.Datacenter == "" {
		c.Datacenter = d.Datacenter
	}
	if c.NodePool == "" {
		c.NodePool = d.NodePool
	}
	if c.Clock == nil {
		c.Clock = d.Clock
	}
	if c.CSIFingerprintInterval == 0 {
		c.CSIFingerprintInterval = 5 * time.Second
	}
	if c.DriverFingerprintInterval == 0 {
		c.DriverFingerprintInterval = 15 * time.Second
	}
	if c.UpdateInterval == 0 {
		c.UpdateInterval = d.UpdateInterval
	}
	if c.WatchWait == 0 {
		c.WatchWait = d.WatchWait
	}
	if c.RetryMin == 0 {
		c.RetryMin = d.RetryMin
	}
	if c.RetryMax == 0 {
		c.RetryMax = max(d.RetryMax, c.RetryMin)
	}
	if c.RequestTimeout == 0 {
		c.RequestTimeout = d.RequestTimeout
	}
	if c.GCMaxAllocs == 0 {
		c.GCMaxAllocs = d.GCMaxAllocs
	}
	if c.LogMaxBytes == 0 {
		c.LogMaxBytes = d.LogMaxBytes
	}
	if c.LogMaxFiles == 0 {
		c.LogMaxFiles = d.LogMaxFiles
	}
	if c.HTTPClient == nil {
		c.HTTPClient = &http.Client{}
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

// Validate reports a Config that cannot work.
func (c Config) Validate() error {
	switch {
	case c.DataDir == "":
		return errors.New("client: DataDir is required")
	case len(c.Servers) == 0:
		return errors.New("client: at least one server address is required")
	case len(c.Drivers) == 0:
		return errors.New("client: at least one task driver is required")
	case c.UpdateInterval < 0, c.WatchWait < 0, c.RetryMin < 0, c.RetryMax < c.RetryMin, c.RequestTimeout < 0:
		return errors.New("client: intervals must be positive (and RetryMax at least RetryMin)")
	case c.GCMaxAllocs < 0:
		return errors.New("client: GCMaxAllocs must not be negative")
	}
	if err := c.validateNetwork(); err != nil { // network.go
		return err
	}
	seen := map[string]bool{}
	for _, d := range c.Drivers {
		if d == nil || d.Name() == "" || seen[d.Name()] {
			return errors.New("client: drivers must be non-nil with distinct names")
		}
		seen[d.Name()] = true
	}
	return nil
}
