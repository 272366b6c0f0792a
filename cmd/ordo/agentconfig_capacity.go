package main

import (
	"fmt"
	"time"

	"github.com/ordoplane/ordo/cmd/agent"
	"github.com/ordoplane/ordo/processors/capacity"
)

// capacityBlock is the agent file's capacity block: capacity on demand
// (docs/capacity.md), node pools mapped to launcher labels.
//
//	capacity {
//	  failure_backoff = "1m"          # no request for a pool this long after one failed
//	  pool "batch" {                  # a node pool
//	    label        = "ubuntu-small" # the launcher label requested for it
//	    tenant       = "team-a"       # optional: the requests' tenant (its limits hold)
//	    max_requests = 10             # open and fulfilled requests at once; default 10
//	    idle_timeout = "10m"          # a launched node without allocations this long is returned; default 10m
//	  }
//	}
type capacityBlock struct {
	FailureBackoff *string             `hcl:"failure_backoff,optional"`
	Pools          []capacityPoolBlock `hcl:"pool,block"`
}

// capacityPoolBlock is one pool block of the capacity block.
type capacityPoolBlock struct {
	Name        string  `hcl:"name,label"`
	Label       string  `hcl:"label"`
	Tenant      *string `hcl:"tenant,optional"`
	MaxRequests *int    `hcl:"max_requests,optional"`
	IdleTimeout *string `hcl:"idle_timeout,optional"`
}

// localDriverBlock is the agent file's local_driver block: the
// launcher's local driver, whose instances are `ordo agent -client`
// processes on this machine.
//
//	local_driver {
//	  binary        = "/usr/local/bin/ordo"     # default this agent's executable
//	  dir           = "/var/lib/ordo/instances" # default <data_dir>/instances
//	  servers       = ["127.0.0.1:4646"]        # default this agent's http_addr
//	  task_drivers  = ["exec"]                  # what the clients offer; default exec
//	  max_instances = 4                         # 0: unlimited
//	  boot_timeout  = "30s"
//	}
type localDriverBlock struct {
	Binary       *string  `hcl:"binary,optional"`
	Dir          *string  `hcl:"dir,optional"`
	Servers      []string `hcl:"servers,optional"`
	TaskDrivers  []string `hcl:"task_drivers,optional"`
	MaxInstances *int     `hcl:"max_instances,optional"`
	BootTimeout  *string  `hcl:"boot_timeout,optional"`
}

// positiveDuration parses the attribute called name; errors name it and
// the file.
func positiveDuration(name, v, path string) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%s in %s: %q is not a positive duration (30s, 10m)", name, path, v)
	}
	return d, nil
}

// applyTo sets c from the block; errors name capacity.<field> and the file.
func (b *capacityBlock) applyTo(c *agent.CapacityConfig, path string) error {
	if b.FailureBackoff != nil {
		d, err := positiveDuration("capacity.failure_backoff", *b.FailureBackoff, path)
		if err != nil {
			return err
		}
		c.FailureBackoff = d
	}
	c.Pools = nil
	for _, pb := range b.Pools {
		p := capacity.Pool{Name: pb.Name, Label: pb.Label}
		if pb.Tenant != nil {
			p.Tenant = *pb.Tenant
		}
		if pb.MaxRequests != nil {
			if *pb.MaxRequests <= 0 {
				return fmt.Errorf("capacity.pool.%s.max_requests in %s: %d must be positive", pb.Name, path, *pb.MaxRequests)
			}
			p.MaxRequests = *pb.MaxRequests
		}
		if pb.IdleTimeout != nil {
			d, err := positiveDuration("capacity.pool."+pb.Name+".idle_timeout", *pb.IdleTimeout, path)
			if err != nil {
				return err
			}
			p.IdleTimeout = d
		}
		c.Pools = append(c.Pools, p)
	}
	if err := capacity.ValidatePools(c.Pools); err != nil {
		return fmt.Errorf("%w (in %s)", err, path)
	}
	return nil
}

// applyTo sets c from the block; errors name local_driver.<field> and
// the file.
func (b *localDriverBlock) applyTo(c *agent.LocalDriverConfig, path string) error {
	if b.Binary != nil {
		c.Binary = *b.Binary
	}
	if b.Dir != nil {
		c.Dir = *b.Dir
	}
	if b.Servers != nil {
		c.Servers = append([]string(nil), b.Servers...)
	}
	if b.TaskDrivers != nil {
		c.TaskDrivers = append([]string(nil), b.TaskDrivers...)
	}
	if b.MaxInstances != nil {
		if *b.MaxInstances < 0 {
			return fmt.Errorf("local_driver.max_instances in %s: %d must not be negative", path, *b.MaxInstances)
		}
		c.MaxInstances = *b.MaxInstances
	}
	if b.BootTimeout != nil {
		d, err := positiveDuration("local_driver.boot_timeout", *b.BootTimeout, path)
		if err != nil {
			return err
		}
		c.BootTimeout = d
	}
	return nil
}
