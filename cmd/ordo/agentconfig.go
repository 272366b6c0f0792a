package main

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/gohcl"
	"github.com/hashicorp/hcl/v2/hclparse"

	"github.com/ordoplane/ordo/cmd/agent"
	"github.com/ordoplane/ordo/processors/mirror"
)

// agentFile is an agent configuration file:
//
//	data_dir  = "/var/lib/ordo"
//	name      = "server-1"
//	http_addr = "0.0.0.0:4646"
//	raft_addr = "10.0.0.1:4647"
//	log_level = "info"
//	region     = "global"              # as Nomad's; ordo runs one region
//	datacenter = "dc1"
//
//	server {
//	  enabled          = true
//	  bootstrap_expect = 3
//	  join             = ["10.0.0.2:4646", "10.0.0.3:4646"]
//	  cluster_secret   = "…"           # the same on every server (agentconfig_cluster.go)
//	  eval_gc_threshold = "1h"         # and batch_eval_, job_, node_, deployment_gc_threshold, job_gc_interval (docs/gc.md)
//	  plan_rejection_tracker {         # (agentconfig_scheduler.go)
//	    enabled = true
//	    node_threshold = 100
//	    node_window    = "5m"
//	  }
//	}
//
//	client {
//	  enabled    = true
//	  servers    = ["10.0.0.1:4646"]   # default this agent's own, with the server role
//	  node_name  = "web-1"             # default the hostname
//	  datacenter = "dc1"
//	  node_class = "compute"
//	  node_pool  = "default"
//	  drivers    = ["exec"]            # exec, mock, docker
//	  meta       = { rack = "r1" }
//	  gc_max_allocs = 50
//	  http_addr  = "0.0.0.0:4648"      # the client's own API (logs, files, exec); default loopback, a free port
//	  network_interface = "eth0"       # addresses, ports, host volumes (agentconfig_network.go)
//	  host_volume "data" { path = "/srv/data" }
//	}
//
//	plugin "docker" {                  # the docker driver (agentconfig_docker.go, docs/docker.md)
//	  config { endpoint = "unix:///var/run/docker.sock" }
//	}
//
//	time_travel {                     # reads at_index/at_time (agentconfig_timetravel.go)
//	  versions_kept = 0
//	}
//
//	mirror {                           # the Kafka mirror (docs/mirror.md)
//	  brokers   = ["kafka-1:9092"]
//	  topic     = "ordo.events"
//	  format    = "json"               # or "msgpack"
//	  client_id = "ordo-mirror"
//	  compression = "gzip"             # none, snappy, lz4, zstd
//	  linger = "20ms"                  # pacing once caught up
//	  tls  { ca_file = "/etc/ordo/kafka-ca.pem" }
//	  sasl { mechanism = "SCRAM-SHA-512"  username = "ordo"  password = "…" }
//	}
//
//	autopilot { server_stabilization_time = "10s" }  # (agentconfig_cluster.go, docs/operations.md)
//	acl { enabled = true }             # ACLs (agentconfig_acl.go, docs/acl.md)
//	keyring { server_token = "…" }     # the root keyring (agentconfig_keyring.go, docs/keyring.md)
//	capacity {                         # capacity on demand (agentconfig_capacity.go, docs/capacity.md)
//	  pool "batch" { label = "ubuntu-small" }
//	}
//	local_driver { task_drivers = ["exec"] }  # the launcher's local driver (agentconfig_capacity.go)
//	limits {                          # the HTTP API's timeouts and connections per client (agentconfig_limits.go)
//	  http_body_timeout         = "30s"
//	  http_max_conns_per_client = 100
//	}
//
// Attributes left out keep the defaults; unknown attributes and blocks are
// errors, so typos do not pass silently.
type agentFile struct {
	DataDir  *string      `hcl:"data_dir,optional"`
	Name     *string      `hcl:"name,optional"`
	HTTPAddr *string      `hcl:"http_addr,optional"`
	RaftAddr *string      `hcl:"raft_addr,optional"`
	LogLevel *string      `hcl:"log_level,optional"`
	Server   *serverBlock `hcl:"server,block"`
	Client   *clientBlock `hcl:"client,block"`
	// TimeTravel is the time_travel block (agentconfig_timetravel.go).
	TimeTravel *timeTravelBlock `hcl:"time_travel,block"`
	ACL        *aclBlock        `hcl:"acl,block"`     // agentconfig_acl.go
	Keyring    *keyringBlock    `hcl:"keyring,block"` // agentconfig_keyring.go
	Mirror     *mirrorBlock     `hcl:"mirror,block"`
	// Capacity and LocalDriver are capacity on demand and the launcher's
	// local driver (agentconfig_capacity.go, docs/capacity.md).
	Capacity    *capacityBlock    `hcl:"capacity,block"`
	LocalDriver *localDriverBlock `hcl:"local_driver,block"`
	// Limits bounds the HTTP API's connections (agentconfig_limits.go).
	Limits *limitsBlock `hcl:"limits,block"`
	// Autopilot is the autopilot block (agentconfig_cluster.go).
	Autopilot *autopilotBlock `hcl:"autopilot,block"`
	// Plugins are the plugin blocks: the docker driver's
	// (agentconfig_docker.go).
	Plugins []pluginBlock `hcl:"plugin,block"`

	// Region and Datacenter are the server's, as Nomad's agent file
	// names them; default "global" and "dc1".
	Region     *string `hcl:"region,optional"`
	Datacenter *string `hcl:"datacenter,optional"`

	// path is the file's name, for error messages.
	path string
}

// serverBlock is the file's server block.
type serverBlock struct {
	Enabled         *bool    `hcl:"enabled,optional"`
	BootstrapExpect *int     `hcl:"bootstrap_expect,optional"`
	Join            []string `hcl:"join,optional"`
	// ClusterSecret is shared by every server (agentconfig_cluster.go).
	ClusterSecret *string `hcl:"cluster_secret,optional"`
	// RaftTimeout is raft's heartbeat and election timeout, a duration.
	RaftTimeout *string `hcl:"raft_timeout,optional"`
	// Garbage collection, as Nomad names it (docs/gc.md): durations.
	EvalGCThreshold       *string `hcl:"eval_gc_threshold,optional"`
	BatchEvalGCThreshold  *string `hcl:"batch_eval_gc_threshold,optional"`
	JobGCThreshold        *string `hcl:"job_gc_threshold,optional"`
	NodeGCThreshold       *string `hcl:"node_gc_threshold,optional"`
	DeploymentGCThreshold *string `hcl:"deployment_gc_threshold,optional"`
	JobGCInterval         *string `hcl:"job_gc_interval,optional"`
	// PlanRejectionTracker is Nomad's plan_rejection_tracker block
	// (agentconfig_scheduler.go).
	PlanRejectionTracker *planRejectionTrackerBlock `hcl:"plan_rejection_tracker,block"`
}

// applyGC sets the GC settings of the server block; errors name the field.
func (b *serverBlock) applyGC(c *agent.GCConfig, path string) error {
	for _, f := range []struct {
		name string
		v    *string
		dst  *time.Duration
	}{
		{"eval_gc_threshold", b.EvalGCThreshold, &c.Thresholds.Eval},
		{"batch_eval_gc_threshold", b.BatchEvalGCThreshold, &c.Thresholds.BatchEval},
		{"job_gc_threshold", b.JobGCThreshold, &c.Thresholds.Job},
		{"node_gc_threshold", b.NodeGCThreshold, &c.Thresholds.Node},
		{"deployment_gc_threshold", b.DeploymentGCThreshold, &c.Thresholds.Deployment},
		{"job_gc_interval", b.JobGCInterval, &c.Interval},
	} {
		if f.v == nil {
			continue
		}
		d, err := time.ParseDuration(*f.v)
		if err != nil || d <= 0 {
			return fmt.Errorf("server.%s in %s: %q is not a positive duration", f.name, path, *f.v)
		}
		*f.dst = d
	}
	return nil
}

// clientBlock is the file's client block.
type clientBlock struct {
	Enabled     *bool             `hcl:"enabled,optional"`
	Servers     []string          `hcl:"servers,optional"`
	NodeName    *string           `hcl:"node_name,optional"`
	Datacenter  *string           `hcl:"datacenter,optional"`
	NodeClass   *string           `hcl:"node_class,optional"`
	NodePool    *string           `hcl:"node_pool,optional"`
	Drivers     []string          `hcl:"drivers,optional"`
	Meta        map[string]string `hcl:"meta,optional"`
	GCMaxAllocs *int              `hcl:"gc_max_allocs,optional"`
	// HTTPAddr is where the client's own API listens (ClientConfig.HTTPAddr).
	HTTPAddr *string `hcl:"http_addr,optional"`
	// Addresses, ports and host volumes (agentconfig_network.go).
	NetworkInterface *string              `hcl:"network_interface,optional"`
	MinDynamicPort   *int                 `hcl:"min_dynamic_port,optional"`
	MaxDynamicPort   *int                 `hcl:"max_dynamic_port,optional"`
	Reserved         *clientReservedBlock `hcl:"reserved,block"`
	HostNetworks     []hostNetworkBlock   `hcl:"host_network,block"`
	HostVolumes      []hostVolumeBlock    `hcl:"host_volume,block"`
}

// applyTo sets in c what the block sets.
func (b *clientBlock) applyTo(c *agent.ClientConfig) {
	if b.Enabled != nil {
		c.Enabled = *b.Enabled
	}
	if b.Servers != nil {
		c.Servers = append([]string(nil), b.Servers...)
	}
	for dst, v := range map[*string]*string{&c.NodeName: b.NodeName, &c.Datacenter: b.Datacenter,
		&c.NodeClass: b.NodeClass, &c.NodePool: b.NodePool, &c.HTTPAddr: b.HTTPAddr} {
		if v != nil {
			*dst = *v
		}
	}
	if b.Drivers != nil {
		c.Drivers = append([]string(nil), b.Drivers...)
	}
	if b.Meta != nil {
		c.Meta = b.Meta
	}
	if b.GCMaxAllocs != nil {
		c.GCMaxAllocs = *b.GCMaxAllocs
	}
	b.applyNetwork(c) // agentconfig_network.go
}

// mirrorBlock is the file's mirror block (processors/mirror.Settings).
type mirrorBlock struct {
	Brokers           []string   `hcl:"brokers"`
	Topic             *string    `hcl:"topic,optional"`
	Format            *string    `hcl:"format,optional"`
	ClientID          *string    `hcl:"client_id,optional"`
	Compression       *string    `hcl:"compression,optional"`
	Linger            *string    `hcl:"linger,optional"`
	TransactionalID   *string    `hcl:"transactional_id,optional"`
	Source            *string    `hcl:"source,optional"`
	Partitions        *int       `hcl:"partitions,optional"`
	ReplicationFactor *int       `hcl:"replication_factor,optional"`
	TLS               *tlsBlock  `hcl:"tls,block"`
	SASL              *saslBlock `hcl:"sasl,block"`
}

// tlsBlock is the mirror block's tls block.
type tlsBlock struct {
	CAFile             *string `hcl:"ca_file,optional"`
	CertFile           *string `hcl:"cert_file,optional"`
	KeyFile            *string `hcl:"key_file,optional"`
	ServerName         *string `hcl:"server_name,optional"`
	InsecureSkipVerify *bool   `hcl:"insecure_skip_verify,optional"`
}

// saslBlock is the mirror block's sasl block.
type saslBlock struct {
	Mechanism string `hcl:"mechanism"`
	Username  string `hcl:"username"`
	Password  string `hcl:"password,optional"`
}

// settings returns the mirror settings the block sets, validated; errors
// name the field and the file.
func (b *mirrorBlock) settings(path string) (*mirror.Settings, error) {
	s := &mirror.Settings{Brokers: append([]string(nil), b.Brokers...)}
	for dst, v := range map[*string]*string{&s.Topic: b.Topic, &s.Format: b.Format, &s.ClientID: b.ClientID,
		&s.TransactionalID: b.TransactionalID, &s.Source: b.Source, &s.Compression: b.Compression} {
		if v != nil {
			*dst = *v
		}
	}
	if b.Linger != nil {
		d, err := time.ParseDuration(*b.Linger)
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("mirror.linger in %s: %q is not a positive duration such as \"20ms\"", path, *b.Linger)
		}
		s.Linger = d
	}
	if b.Partitions != nil {
		if *b.Partitions <= 0 || *b.Partitions > 1<<20 {
			return nil, fmt.Errorf("mirror.partitions in %s: %d must be between 1 and 1048576", path, *b.Partitions)
		}
		s.Partitions = int32(*b.Partitions)
	}
	if b.ReplicationFactor != nil {
		if *b.ReplicationFactor < -1 || *b.ReplicationFactor == 0 || *b.ReplicationFactor > 1<<14 {
			return nil, fmt.Errorf("mirror.replication_factor in %s: %d must be positive, or -1 for the brokers' default", path, *b.ReplicationFactor)
		}
		s.ReplicationFactor = int16(*b.ReplicationFactor)
	}
	if t := b.TLS; t != nil {
		s.TLS = &mirror.TLS{}
		for dst, v := range map[*string]*string{&s.TLS.CAFile: t.CAFile, &s.TLS.CertFile: t.CertFile,
			&s.TLS.KeyFile: t.KeyFile, &s.TLS.ServerName: t.ServerName} {
			if v != nil {
				*dst = *v
			}
		}
		if t.InsecureSkipVerify != nil {
			s.TLS.InsecureSkipVerify = *t.InsecureSkipVerify
		}
	}
	if a := b.SASL; a != nil {
		s.SASL = &mirror.SASL{Mechanism: a.Mechanism, Username: a.Username, Password: a.Password}
	}
	if err := s.Validate(); err != nil {
		return nil, fmt.Errorf("%w (in %s)", err, path)
	}
	return s, nil
}

// opaqueBlock is a block kept for a later feature to decode.
type opaqueBlock struct {
	Body hcl.Body `hcl:",remain"`
}

// loadAgentFile reads and decodes the configuration file at path.
func loadAgentFile(path string) (*agentFile, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read agent config: %w", err)
	}
	return parseAgentFile(path, src)
}

// parseAgentFile decodes src, the text of the file called path: JSON when
// path ends in .json, HCL otherwise.
func parseAgentFile(path string, src []byte) (*agentFile, error) {
	p := hclparse.NewParser()
	var (
		f     *hcl.File
		diags hcl.Diagnostics
	)
	if strings.HasSuffix(path, ".json") {
		f, diags = p.ParseJSON(src, path)
	} else {
		f, diags = p.ParseHCL(src, path)
	}
	if diags.HasErrors() {
		return nil, fmt.Errorf("parse agent config: %w", diagError(diags))
	}
	var out agentFile
	if diags := gohcl.DecodeBody(f.Body, nil, &out); diags.HasErrors() {
		return nil, fmt.Errorf("decode agent config: %w", diagError(diags))
	}
	out.path = path
	return &out, nil
}

// diagError joins the error diagnostics of diags, each with its position.
func diagError(diags hcl.Diagnostics) error {
	var errs []error
	for _, d := range diags.Errs() {
		errs = append(errs, d)
	}
	return errors.Join(errs...)
}

// applyTo sets in c what the file sets.
func (f *agentFile) applyTo(c *agent.Config) error {
	setString := func(dst *string, v *string) {
		if v != nil {
			*dst = *v
		}
	}
	setString(&c.DataDir, f.DataDir)
	setString(&c.Name, f.Name)
	setString(&c.HTTPAddr, f.HTTPAddr)
	setString(&c.RaftAddr, f.RaftAddr)
	setString(&c.Region, f.Region)
	setString(&c.Datacenter, f.Datacenter)
	if s := f.Server; s != nil {
		if s.Enabled != nil {
			c.Server = *s.Enabled
		}
		if s.BootstrapExpect != nil {
			if *s.BootstrapExpect < 0 {
				return fmt.Errorf("server.bootstrap_expect in %s: %d must not be negative", f.path, *s.BootstrapExpect)
			}
			c.BootstrapExpect = *s.BootstrapExpect
		}
		if s.Join != nil {
			c.Join = append([]string(nil), s.Join...)
		}
		if s.RaftTimeout != nil {
			d, err := time.ParseDuration(*s.RaftTimeout)
			if err != nil {
				return fmt.Errorf("server.raft_timeout in %s: %q is not a duration such as 1s", f.path, *s.RaftTimeout)
			}
			c.RaftTimeout = d
		}
		if err := s.applyGC(&c.GC, f.path); err != nil {
			return err
		}
		if err := s.applyClusterSecret(c, f.path); err != nil { // agentconfig_cluster.go
			return err
		}
		if t := s.PlanRejectionTracker; t != nil {
			if err := t.applyTo(&c.Scheduler.PlanRejectionTracker, f.path); err != nil {
				return err
			}
		}
	}
	if f.Autopilot != nil {
		if err := f.Autopilot.applyTo(&c.Autopilot, f.path); err != nil {
			return err
		}
	}
	if f.Client != nil {
		if f.Client.GCMaxAllocs != nil && *f.Client.GCMaxAllocs < 0 {
			return fmt.Errorf("client.gc_max_allocs in %s: %d must not be negative", f.path, *f.Client.GCMaxAllocs)
		}
		if a := f.Client.HTTPAddr; a != nil {
			if err := checkListenAddr(*a); err != nil {
				return fmt.Errorf("client.http_addr in %s: %w", f.path, err)
			}
		}
		f.Client.applyTo(&c.Client)
	}
	if f.TimeTravel != nil {
		if err := f.TimeTravel.applyTo(&c.TimeTravel, f.path); err != nil {
			return err
		}
	}
	if f.Mirror != nil {
		s, err := f.Mirror.settings(f.path)
		if err != nil {
			return err
		}
		c.Mirror = s
	}
	if f.ACL != nil {
		if err := f.ACL.applyTo(&c.ACL, f.path); err != nil {
			return err
		}
	}
	if f.Keyring != nil {
		if err := f.Keyring.applyTo(&c.Keyring, f.path); err != nil {
			return err
		}
	}
	if f.Capacity != nil {
		if err := f.Capacity.applyTo(&c.Capacity, f.path); err != nil {
			return err
		}
	}
	if f.Limits != nil {
		if err := f.Limits.applyTo(c, f.path); err != nil {
			return err
		}
	}
	if f.LocalDriver != nil {
		if err := f.LocalDriver.applyTo(&c.LocalDriver, f.path); err != nil {
			return err
		}
	}
	if err := applyPlugins(f.Plugins, &c.Client, f.path); err != nil { // agentconfig_docker.go
		return err
	}
	return nil
}

// checkListenAddr reports why addr is not an address to listen on,
// host:port (an empty host: every address; port 0: a free one).
func checkListenAddr(addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%q is not host:port", addr)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return fmt.Errorf("%q: port %q is not a number from 0 to 65535", addr, port)
	}
	return nil
}
