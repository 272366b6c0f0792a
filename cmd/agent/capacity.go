package agent

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/processors/capacity"
	"github.com/ordoplane/ordo/processors/launcher"
	"github.com/ordoplane/ordo/processors/launcher/driver"
	"github.com/ordoplane/ordo/processors/launcher/driver/local"
)

// CapacityConfig is capacity on demand (processors/capacity,
// docs/capacity.md): node pools mapped to launcher labels. No pools runs
// no capacity processor.
type CapacityConfig struct {
	// Pools are the mapped node pools.
	Pools []capacity.Pool `json:"Pools"`
	// FailureBackoff is how long a pool files no request after one of its
	// requests failed; default 1m.
	FailureBackoff time.Duration `json:"FailureBackoff"`
}

// LocalDriverConfig is the launcher's local driver
// (processors/launcher/driver/local): instances are `ordo agent -client`
// processes on this server's machine.
type LocalDriverConfig struct {
	// Binary is the ordo executable the instances run; default this
	// agent's own executable.
	Binary string `json:"Binary"`
	// Dir holds one directory per instance; default <data dir>/instances.
	Dir string `json:"Dir"`
	// Servers are the servers' HTTP addresses the instances talk to;
	// default this agent's HTTP address.
	Servers []string `json:"Servers"`
	// TaskDrivers are the task drivers the instances offer; default exec.
	TaskDrivers []string `json:"TaskDrivers"`
	// MaxInstances is how many instances may run at once; 0 is unlimited.
	MaxInstances int `json:"MaxInstances"`
	// BootTimeout bounds an instance's start; default 30s.
	BootTimeout time.Duration `json:"BootTimeout"`
}

// localDriver is the agent's one local driver, shared by every
// generation of every local provider, built on first use.
type localDriver struct {
	once sync.Once
	d    *local.Driver
	err  error
}

// withLocalDriver adds the local driver's factory to drivers.
func (a *Agent) withLocalDriver(drivers map[string]launcher.Factory) map[string]launcher.Factory {
	drivers["local"] = func(events.ProviderConfig) (driver.Driver, error) {
		a.local.once.Do(func() { a.local.d, a.local.err = a.newLocalDriver() })
		return a.local.d, a.local.err
	}
	return drivers
}

func (a *Agent) newLocalDriver() (*local.Driver, error) {
	c := a.cfg.LocalDriver
	bin := c.Binary
	if bin == "" {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("local driver: find this executable: %w", err)
		}
		bin = exe
	}
	dir := c.Dir
	if dir == "" {
		dir = filepath.Join(a.cfg.DataDir, "instances")
	}
	servers := c.Servers
	if len(servers) == 0 {
		servers = []string{a.httpAddr}
	}
	return local.New(local.Config{Binary: bin, Dir: dir, Servers: servers, TaskDrivers: c.TaskDrivers,
		MaxInstances: c.MaxInstances, BootTimeout: c.BootTimeout})
}

// newCapacity returns the leader-only capacity processor, nil when no
// pool is mapped. Its metrics go to the agent's registry.
func (a *Agent) newCapacity() (*capacity.Processor, error) {
	if len(a.cfg.Capacity.Pools) == 0 {
		return nil, nil
	}
	return capacity.New(capacity.Config{Pipeline: a.pipeline, State: a.fsm, Pools: a.cfg.Capacity.Pools,
		FailureBackoff: a.cfg.Capacity.FailureBackoff, Logger: a.log, Registerer: a.reg})
}

// stopLocalInstances kills the local driver's instance processes when
// the agent runs -dev: their directories are in the dev data directory,
// removed on exit. Otherwise instances outlive the agent, as cloud
// machines would, and a restarted agent deletes them by their pid files.
func (a *Agent) stopLocalInstances() {
	if a.cfg.Dev && a.local.d != nil {
		a.local.d.Close()
	}
}
