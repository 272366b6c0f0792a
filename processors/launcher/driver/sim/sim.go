// Package sim is a simulated cloud for the launcher: instance types,
// quota, boot time measured on the runner's clock, and injected failures
// (quota refusals, unknown instance types, transient API errors). Tests
// and benchmarks use it.
//
// # Usage
//
//	c := sim.New(cfg, sim.Faults{FailRate: 0.05, Seed: 1})
//	var _ driver.Driver = c
//
// # Concurrency
//
// A Cloud may be used from several goroutines (a runner, and a test that
// injects faults); it guards its state with a mutex.
//
// # Invariants
//
//   - The cloud never holds more instances, cores or RAM than its quota:
//     a create past it fails with driver.ErrQuota.
package sim

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/processors/launcher/driver"
)

// Faults are the failures a Cloud injects.
type Faults struct {
	// FailRate is the share of creates failing with a transient error.
	FailRate float64
	// Seed seeds the choice of failing creates.
	Seed uint64
	// QuotaRefusals is how many creates to refuse for quota, regardless
	// of usage (P24), before behaving.
	QuotaRefusals int
	// QuotaErrors is how many Quota calls fail transiently (P14).
	QuotaErrors int
	// TypeErrors is how many InstanceType calls fail transiently (P14).
	TypeErrors int
	// Unknown lists instance types the cloud claims not to have (P2).
	Unknown []string
}

// Cloud is a simulated cloud.
type Cloud struct {
	cfg events.SimConfig
	mu  struct {
		sync.Mutex
		faults  Faults
		rng     *rand.Rand
		next    int
		live    map[string]driver.Resources
		creates int
	}
}

var _ driver.Driver = (*Cloud)(nil)

// New returns a cloud with cfg's instance types, quota and boot time.
func New(cfg events.SimConfig, f Faults) *Cloud {
	c := &Cloud{cfg: cfg}
	c.mu.faults = f
	c.mu.rng = rand.New(rand.NewPCG(f.Seed, f.Seed^0x9e3779b97f4a7c15))
	c.mu.live = map[string]driver.Resources{}
	return c
}

// Inject replaces the cloud's faults.
func (c *Cloud) Inject(f Faults) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.mu.faults = f
}

// Live returns how many instances the cloud holds.
func (c *Cloud) Live() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.mu.live)
}

// Creates returns how many creates reached the cloud's API.
func (c *Cloud) Creates() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mu.creates
}

func (c *Cloud) unknownLocked(t string) bool {
	for _, u := range c.mu.faults.Unknown {
		if u == t {
			return true
		}
	}
	_, ok := c.cfg.InstanceTypes[t]
	return !ok
}

// InstanceType implements driver.Driver.
func (c *Cloud) InstanceType(_ context.Context, name string) (driver.Resources, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.unknownLocked(name) {
		return driver.Resources{}, fmt.Errorf("instance type %q does not exist: %w", name, driver.ErrPermanent)
	}
	if c.mu.faults.TypeErrors > 0 {
		c.mu.faults.TypeErrors--
		return driver.Resources{}, fmt.Errorf("sim: instance type API unavailable")
	}
	t := c.cfg.InstanceTypes[name]
	return driver.Resources{Cores: t.Cores, RAMMB: t.RAMMB}, nil
}

// Quota implements driver.Driver.
func (c *Cloud) Quota(context.Context) (driver.Quota, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mu.faults.QuotaErrors > 0 {
		c.mu.faults.QuotaErrors--
		return driver.Quota{}, fmt.Errorf("sim: quota API unavailable")
	}
	q := c.cfg.Quota
	return driver.Quota{Instances: q.Instances, Cores: q.Cores, RAMMB: q.RAMMB}, nil
}

// create is the cloud's create call.
func (c *Cloud) create(spec driver.Spec) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.mu.creates++
	f := &c.mu.faults
	if c.unknownLocked(spec.InstanceType) {
		return "", fmt.Errorf("create %s: instance type %q does not exist: %w", spec.InstanceID, spec.InstanceType, driver.ErrPermanent)
	}
	if f.QuotaRefusals > 0 {
		f.QuotaRefusals--
		return "", fmt.Errorf("create %s: %w (injected)", spec.InstanceID, driver.ErrQuota)
	}
	if f.FailRate > 0 && c.mu.rng.Float64() < f.FailRate {
		return "", fmt.Errorf("create %s: sim: transient API error (injected)", spec.InstanceID)
	}
	t := c.cfg.InstanceTypes[spec.InstanceType]
	var used driver.Resources
	for _, r := range c.mu.live {
		used.Cores += r.Cores
		used.RAMMB += r.RAMMB
	}
	q := c.cfg.Quota
	if (q.Instances > 0 && len(c.mu.live)+1 > q.Instances) || (q.Cores > 0 && used.Cores+t.Cores > q.Cores) ||
		(q.RAMMB > 0 && used.RAMMB+t.RAMMB > q.RAMMB) {
		return "", fmt.Errorf("create %s: %w", spec.InstanceID, driver.ErrQuota)
	}
	c.mu.next++
	ext := fmt.Sprintf("sim-%d", c.mu.next)
	c.mu.live[ext] = driver.Resources{Cores: t.Cores, RAMMB: t.RAMMB}
	return ext, nil
}

func (c *Cloud) remove(ext string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.mu.live, ext)
}

// Create implements driver.Driver.
func (c *Cloud) Create(spec driver.Spec) driver.CreateMachine {
	return &createMachine{c: c, spec: spec}
}

// Delete implements driver.Driver.
func (c *Cloud) Delete(_, externalID string) driver.Machine {
	return &deleteMachine{c: c, ext: externalID}
}

// createMachine: requested → booting (until boot time passed) → done.
type createMachine struct {
	c      *Cloud
	spec   driver.Spec
	ext    string
	readyT time.Time
}

func (m *createMachine) Advance(_ context.Context, now time.Time) (bool, error) {
	if m.ext == "" {
		ext, err := m.c.create(m.spec)
		if err != nil {
			return true, err
		}
		m.ext, m.readyT = ext, now.Add(time.Duration(m.c.cfg.BootTime))
	}
	return !now.Before(m.readyT), nil
}

func (m *createMachine) Result() driver.Created {
	return driver.Created{ExternalID: m.ext, Addresses: []string{"10.1.0." + m.ext[len("sim-"):]}}
}

type deleteMachine struct {
	c   *Cloud
	ext string
}

func (m *deleteMachine) Advance(context.Context, time.Time) (bool, error) {
	if m.ext != "" {
		m.c.remove(m.ext)
	}
	return true, nil
}
