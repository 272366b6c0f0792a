package main

import (
	"fmt"
	"time"

	"github.com/ordoplane/ordo/cmd/agent"
	"github.com/ordoplane/ordo/storage/raftlog"
)

// clusterSecretEnv names the environment variable that sets the cluster
// secret: it overrides the file, and -cluster-secret overrides it. The
// CLI's membership commands send it too.
const clusterSecretEnv = "ORDO_CLUSTER_SECRET"

// applyClusterSecret sets the server block's cluster_secret:
//
//	server {
//	  cluster_secret = "…"   # the same on every server; never shown
//	}
func (b *serverBlock) applyClusterSecret(c *agent.Config, path string) error {
	if b.ClusterSecret == nil {
		return nil
	}
	if *b.ClusterSecret == "" {
		return fmt.Errorf("server.cluster_secret in %s: empty; leave it out for none", path)
	}
	c.ClusterSecret = *b.ClusterSecret
	return nil
}

// autopilotBlock is the agent file's autopilot block, as Nomad's:
//
//	autopilot {
//	  cleanup_dead_servers      = false   # remove servers dead for dead_server_last_contact_threshold
//	  last_contact_threshold    = "200ms"
//	  max_trailing_logs         = 250
//	  min_quorum                = 0
//	  server_stabilization_time = "10s"
//	  dead_server_last_contact_threshold = "24h"
//	}
//
// An attribute left out keeps its default.
type autopilotBlock struct {
	CleanupDeadServers             *bool   `hcl:"cleanup_dead_servers,optional"`
	LastContactThreshold           *string `hcl:"last_contact_threshold,optional"`
	MaxTrailingLogs                *int    `hcl:"max_trailing_logs,optional"`
	MinQuorum                      *int    `hcl:"min_quorum,optional"`
	ServerStabilizationTime        *string `hcl:"server_stabilization_time,optional"`
	DeadServerLastContactThreshold *string `hcl:"dead_server_last_contact_threshold,optional"`
}

// applyTo sets in c what the block sets; errors name autopilot.<attribute>
// and the file.
func (b *autopilotBlock) applyTo(c *raftlog.AutopilotConfig, path string) error {
	if b.CleanupDeadServers != nil {
		c.CleanupDeadServers = *b.CleanupDeadServers
	}
	for _, d := range []struct {
		name string
		v    *string
		dst  *time.Duration
	}{
		{"last_contact_threshold", b.LastContactThreshold, &c.LastContactThreshold},
		{"server_stabilization_time", b.ServerStabilizationTime, &c.ServerStabilizationTime},
		{"dead_server_last_contact_threshold", b.DeadServerLastContactThreshold, &c.DeadServerLastContactThreshold},
	} {
		if d.v == nil {
			continue
		}
		v, err := time.ParseDuration(*d.v)
		if err != nil || v <= 0 {
			return fmt.Errorf("autopilot.%s in %s: %q is not a positive duration", d.name, path, *d.v)
		}
		*d.dst = v
	}
	if b.MaxTrailingLogs != nil {
		if *b.MaxTrailingLogs <= 0 {
			return fmt.Errorf("autopilot.max_trailing_logs in %s: %d must be positive", path, *b.MaxTrailingLogs)
		}
		c.MaxTrailingLogs = uint64(*b.MaxTrailingLogs)
	}
	if b.MinQuorum != nil {
		if *b.MinQuorum < 0 {
			return fmt.Errorf("autopilot.min_quorum in %s: %d must not be negative", path, *b.MinQuorum)
		}
		c.MinQuorum = uint(*b.MinQuorum)
	}
	return nil
}
