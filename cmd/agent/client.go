package agent

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ordoplane/ordo/client"
	"github.com/ordoplane/ordo/client/csi"
	"github.com/ordoplane/ordo/client/driver"
	"github.com/ordoplane/ordo/client/driver/docker"
	"github.com/ordoplane/ordo/client/driver/exec"
	"github.com/ordoplane/ordo/client/driver/mock"
	clienthttp "github.com/ordoplane/ordo/client/httpapi"
	"github.com/ordoplane/ordo/client/stats"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/logtee"
)

// ClientConfig configures the client role: the client agent that runs
// allocations on this machine (package client).
type ClientConfig struct {
	// Enabled runs the client role.
	Enabled bool `json:"Enabled"`
	// Servers are the servers' HTTP addresses; default this agent's own
	// when it is also a server. Required for a client-only agent.
	Servers []string `json:"Servers"`
	// NodeName is the node's name; default the hostname.
	NodeName string `json:"NodeName"`
	// DataDir holds the client's state and allocation directories;
	// default the agent's data directory.
	DataDir string `json:"DataDir"`
	// Datacenter is the node's datacenter; default dc1.
	Datacenter string `json:"Datacenter"`
	// NodeClass and NodePool place the node; NodePool defaults to default.
	NodeClass string `json:"NodeClass"`
	NodePool  string `json:"NodePool"`
	// Meta is the node's metadata.
	Meta map[string]string `json:"Meta"`
	// Drivers names the task drivers to offer: exec, mock, docker;
	// default exec.
	Drivers []string `json:"Drivers"`
	// Docker configures the docker driver (docker.go).
	Docker DockerConfig `json:"Docker"`
	// GCMaxAllocs is how many terminal allocations keep their directory;
	// default 50.
	GCMaxAllocs int `json:"GCMaxAllocs"`
	// CSIFingerprintInterval is how often the CSI plugins of the node's
	// tasks are fingerprinted; default 5s.
	CSIFingerprintInterval time.Duration `json:"CSIFingerprintInterval"`
	// HTTPAddr is where the client's own HTTP API (task logs, which the
	// servers proxy to) listens, host:port; the node advertises it (an
	// unspecified host advertises the machine's first non-loopback
	// address). Default DefaultClientHTTPAddr; set an address the servers
	// can reach when they run on other machines.
	HTTPAddr string `json:"HTTPAddr"`
	// Reserved is the part of the node's resources kept from allocations.
	Reserved events.NodeResources `json:"Reserved"`
	// NetworkAddress is the node's default address, where tasks' ports are
	// reached (a dev agent's 127.0.0.1); empty: the first IPv4 address of
	// NetworkInterface, or the machine's first non-loopback one.
	NetworkAddress   string `json:"NetworkAddress"`
	NetworkInterface string `json:"NetworkInterface"`
	// MinDynamicPort and MaxDynamicPort bound dynamic ports; defaults
	// 20000 and 32000. ReservedPorts are kept from allocations
	// ("22,80,8000-8100").
	MinDynamicPort int    `json:"MinDynamicPort"`
	MaxDynamicPort int    `json:"MaxDynamicPort"`
	ReservedPorts  string `json:"ReservedPorts"`
	// HostNetworks and HostVolumes are the client block's host_network
	// and host_volume blocks (client.HostNetwork, client.HostVolume).
	HostNetworks []client.HostNetwork `json:"HostNetworks"`
	HostVolumes  []client.HostVolume  `json:"HostVolumes"`
}

// DefaultClientHTTPAddr is where the client's HTTP API listens by
// default: loopback, on a free port.
const DefaultClientHTTPAddr = "127.0.0.1:0"

// DevClientConfig returns the client role of `ordo agent -dev`: enabled,
// with the exec and mock drivers, its data in the dev data directory.
func DevClientConfig() ClientConfig {
	// Its tasks' ports are reached on loopback, like its API.
	return ClientConfig{Enabled: true, Drivers: []string{exec.Name, mock.Name}, NetworkAddress: "127.0.0.1"}
}

// validate reports a client role that cannot work.
func (c ClientConfig) validate(server bool) error {
	if !c.Enabled {
		return nil
	}
	if !server && len(c.Servers) == 0 {
		return errors.New("agent: a client-only agent needs -servers")
	}
	for _, d := range c.Drivers {
		if d != exec.Name && d != mock.Name && d != docker.Name {
			return fmt.Errorf("agent: unknown task driver %q (want %s, %s or %s)", d, exec.Name, mock.Name, docker.Name)
		}
	}
	return nil
}

// startClient starts the client role against servers, under the agent's
// context; Shutdown joins it.
func (a *Agent) startClient(ctx context.Context, servers []string) error {
	cc := a.cfg.Client
	if len(cc.Servers) > 0 {
		servers = cc.Servers
	}
	dataDir := cc.DataDir
	if dataDir == "" {
		dataDir = a.cfg.DataDir
	}
	names := cc.Drivers
	if len(names) == 0 {
		names = []string{exec.Name}
	}
	log := a.cfg.Logger.With("role", "client")
	var drivers []driver.Driver
	var closers []func() error
	closeAll := func() {
		for _, f := range closers {
			if err := f(); err != nil {
				log.Error("close driver", "err", err)
			}
		}
	}
	for _, name := range names {
		switch name {
		case exec.Name:
			d, err := exec.New(exec.Config{Logger: log})
			if err != nil {
				closeAll()
				return fmt.Errorf("agent: exec driver: %w", err)
			}
			drivers, closers = append(drivers, d), append(closers, d.Close)
		case mock.Name:
			d, err := mock.New(mock.Config{})
			if err != nil {
				closeAll()
				return fmt.Errorf("agent: mock driver: %w", err)
			}
			drivers = append(drivers, d)
		case docker.Name:
			d, err := newDockerDriver(cc.Docker, dataDir, log) // docker.go
			if err != nil {
				closeAll()
				return fmt.Errorf("agent: docker driver: %w", err)
			}
			drivers, closers = append(drivers, d), append(closers, d.Close)
		}
	}
	httpAddr := cc.HTTPAddr
	if httpAddr == "" {
		httpAddr = DefaultClientHTTPAddr
	}
	ln, advertise, err := clienthttp.Listen(httpAddr)
	if err != nil {
		closeAll()
		return fmt.Errorf("agent: client http: %w", err)
	}
	csiMgr, err := csi.NewManager(filepath.Join(dataDir, "csi"), log, 0) // CSI plugins of the node's tasks
	if err != nil {
		ln.Close()
		closeAll()
		return fmt.Errorf("agent: %w", err)
	}
	closers = append(closers, func() error { csiMgr.Close(); return nil })
	c, err := client.New(client.Config{DataDir: dataDir, Servers: servers, NodeName: cc.NodeName, CSI: csiMgr,
		CSIFingerprintInterval: cc.CSIFingerprintInterval,
		Datacenter:             cc.Datacenter, NodeClass: cc.NodeClass, NodePool: cc.NodePool, Meta: cc.Meta,
		Drivers: drivers, GCMaxAllocs: cc.GCMaxAllocs, DestroyOnShutdown: a.cfg.Dev, HTTPAddr: advertise,
		Reserved: cc.Reserved, NetworkAddress: cc.NetworkAddress, NetworkInterface: cc.NetworkInterface,
		MinDynamicPort: cc.MinDynamicPort, MaxDynamicPort: cc.MaxDynamicPort, ReservedPorts: cc.ReservedPorts,
		HostNetworks: cc.HostNetworks, HostVolumes: cc.HostVolumes,
		Logger: log, Registerer: a.reg})
	if err != nil {
		ln.Close()
		closeAll()
		return fmt.Errorf("agent: %w", err)
	}
	api, err := clienthttp.New(clienthttp.Config{Allocs: clienthttp.Runners(c.Runner), Logger: log, CSI: csiMgr.Handler(),
		Limits: a.cfg.HTTP, Registerer: a.reg, Monitor: a.tee, // the limits block, as the servers' API
		Collector: c, Stats: stats.New(stats.Config{AllocDir: filepath.Join(dataDir, "alloc")})})
	if err != nil {
		ln.Close()
		closeAll()
		return fmt.Errorf("agent: %w", err)
	}
	a.client = c
	a.goroutine(func() {
		if err := api.Serve(ctx, ln); err != nil {
			log.Error("client http stopped", "err", err)
		}
	})
	a.goroutine(func() {
		defer closeAll()
		if err := c.Run(ctx); err != nil {
			log.Error("client stopped", "err", err)
		}
	})
	log.Info("client http listening", "addr", ln.Addr().String(), "advertise", advertise)
	return nil
}

// Client returns the client role, nil when the agent runs none.
func (a *Agent) Client() *client.Client { return a.client }

// startClientOnly starts an agent that runs the client role alone.
func startClientOnly(cfg Config, tee *logtee.Tee) (*Agent, error) {
	a := &Agent{cfg: cfg, reg: prometheus.NewRegistry(), tee: tee}
	if err := tee.Register(a.reg); err != nil {
		return nil, err
	}
	a.log = cfg.Logger.With("role", "client")
	ctx, cancel := context.WithCancel(context.Background())
	a.cancel = cancel
	if err := a.startClient(ctx, nil); err != nil {
		cancel()
		return nil, err
	}
	a.log.Info("client agent started", "servers", cfg.Client.Servers, "data_dir", cfg.DataDir)
	return a, nil
}
