package client

import (
	"context"
	"fmt"
	"hash/fnv"
	"log/slog"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"time"

	"github.com/ordoplane/ordo/api"
	"github.com/ordoplane/ordo/client/allocrunner"
	"github.com/ordoplane/ordo/client/driver"
	"github.com/ordoplane/ordo/client/fingerprint"
	"github.com/ordoplane/ordo/client/serverapi"
	"github.com/ordoplane/ordo/client/services"
	"github.com/ordoplane/ordo/client/state"
	"github.com/ordoplane/ordo/client/template"
	"github.com/ordoplane/ordo/clock"
	"github.com/ordoplane/ordo/events"
)

// Client is a client agent. Build it with New and run it with Run.
type Client struct {
	cfg     Config
	id      string
	log     *slog.Logger
	store   *state.Store
	api     *serverapi.Client
	drivers map[string]driver.Driver
	arMet   *allocrunner.Metrics
	met     *metrics
	// services registers the allocations' services and runs their checks.
	services *services.Manager

	// updateCh wakes the update loop; reregister asks the heartbeat loop
	// to register again; heartbeatNow asks it to heartbeat at once.
	updateCh     chan struct{}
	reregister   chan struct{}
	heartbeatNow chan struct{}
	// registered is closed after the first successful registration.
	registered chan struct{}
	regOnce    sync.Once

	runnerWG sync.WaitGroup

	mu struct {
		sync.Mutex
		node    events.Node
		runners map[string]*entry
		// dirty holds allocations whose latest state the servers have
		// not acknowledged; force sends an update even with none: after
		// a reconnect the servers wait for an alloc report before the
		// node is ready again (N1).
		dirty map[string]bool
		force bool
		// destroyed are allocations whose runner was removed; they are
		// not run again by this process.
		destroyed map[string]bool
		rand      *rand.Rand
		running   bool
	}
}

// entry is one allocation's runner.
type entry struct {
	r *allocrunner.Runner
	// modifyIndex is the AllocModifyIndex the runner was last given.
	modifyIndex uint64
	// jobVersion is the job version the runner runs.
	jobVersion uint64
	// refused marks an allocation whose update the servers refused (they
	// do not have it): its state is no longer sent.
	refused bool
	// removing marks an allocation the servers no longer list: its tasks
	// are killed and gc removes it once they are dead (orphans.go).
	removing bool
}

// New returns a client for cfg: it opens the state directory and reads
// (or mints) the node id. Nothing runs until Run.
func New(cfg Config) (*Client, error) {
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	st, err := state.Open(cfg.DataDir)
	if err != nil {
		return nil, err
	}
	id, err := st.NodeID()
	if err != nil {
		return nil, err
	}
	servers, err := serverapi.New(cfg.Servers, api.WithHTTPClient(cfg.HTTPClient),
		api.WithRequestTimeout(cfg.RequestTimeout), api.WithLogger(cfg.Logger), api.WithUserAgent("ordo-client"))
	if err != nil {
		return nil, err
	}
	c := &Client{cfg: cfg, id: id, log: cfg.Logger.With("node_id", id), store: st, api: servers,
		drivers: map[string]driver.Driver{}, arMet: allocrunner.NewMetrics(nil),
		updateCh: make(chan struct{}, 1), reregister: make(chan struct{}, 1), heartbeatNow: make(chan struct{}, 1),
		registered: make(chan struct{})}
	for _, d := range cfg.Drivers {
		c.drivers[d.Name()] = d
	}
	seed := cfg.Seed
	if seed == 0 {
		h := fnv.New64a()
		h.Write([]byte(id))
		seed = h.Sum64()
	}
	c.mu.rand = rand.New(rand.NewPCG(seed, seed>>1|1))
	c.mu.runners = map[string]*entry{}
	c.mu.dirty = map[string]bool{}
	c.mu.destroyed = map[string]bool{}
	c.met = newMetrics(c)
	if c.services, err = services.New(services.Config{Servers: servers, Node: c.Node, Clock: cfg.Clock,
		Interval: cfg.UpdateInterval, Backoff: c.backoff, Logger: c.log, Metrics: services.NewMetrics()}); err != nil {
		return nil, err
	}
	return c, nil
}

// NodeID returns the node's id.
func (c *Client) NodeID() string { return c.id }

// Node returns the node as last registered (empty before Run fingerprints).
func (c *Client) Node() events.Node {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mu.node
}

// Run fingerprints the node, re-attaches to the allocations the state
// directory holds, registers, heartbeats, watches the node's allocations,
// runs them and reports them, until ctx ends. It then leaves the tasks
// running (or kills them, with DestroyOnShutdown) and returns nil once
// every goroutine it started has ended; an error only when it could not
// start.
func (c *Client) Run(ctx context.Context) error {
	c.mu.Lock()
	if c.mu.running {
		c.mu.Unlock()
		return fmt.Errorf("client: already running")
	}
	c.mu.running = true
	c.mu.Unlock()

	node, err := c.fingerprint()
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.mu.node = node
	c.mu.Unlock()

	if reg := c.cfg.Registerer; reg != nil {
		m := allocrunner.NewMetrics(nil)
		cols := append(c.met.collectors(), m.TaskStarts, m.TaskRestarts, m.TaskFailures, m.TasksRecovered, m.TasksLost)
		cols = append(cols, c.services.Metrics().Collectors()...)
		for i, col := range cols {
			if err := reg.Register(col); err != nil {
				for _, done := range cols[:i] {
					reg.Unregister(done)
				}
				return fmt.Errorf("client: register metrics: %w", err)
			}
		}
		c.arMet = m
		defer func() {
			for _, col := range cols {
				reg.Unregister(col)
			}
		}()
	}

	runCtx, stopRunners := context.WithCancel(context.Background())
	defer stopRunners()
	if err := c.restore(runCtx); err != nil {
		stopRunners()
		c.runnerWG.Wait()
		return err
	}
	c.log.Info("client started", "name", node.Name, "datacenter", node.Datacenter, "servers", c.api.Servers(),
		"data_dir", c.cfg.DataDir, "cpu_mhz", node.Resources.CPU, "memory_mb", node.Resources.MemoryMB)

	var loops sync.WaitGroup
	loops.Go(func() { c.heartbeatLoop(ctx) })
	loops.Go(func() { c.watchLoop(ctx, runCtx) })
	loops.Go(func() { c.updateLoop(ctx) })
	loops.Go(func() { c.csiLoop(ctx) })    // csi_fingerprint.go
	loops.Go(func() { c.driverLoop(ctx) }) // driver_fingerprint.go
	loops.Go(func() { c.services.Run(ctx) })
	<-ctx.Done()
	loops.Wait()

	if c.cfg.DestroyOnShutdown {
		c.killAll()
	}
	stopRunners()
	c.runnerWG.Wait()
	c.services.Close()
	c.log.Info("client stopped")
	return nil
}

// fingerprint builds the node to register.
func (c *Client) fingerprint() (events.Node, error) {
	drivers := make([]driver.Driver, 0, len(c.cfg.Drivers))
	drivers = append(drivers, c.cfg.Drivers...)
	fp, err := fingerprint.Run(fingerprint.Config{ProcRoot: c.cfg.ProcRoot, OSRelease: c.cfg.OSRelease,
		DataDir: c.cfg.DataDir, Drivers: drivers})
	if err != nil {
		return events.Node{}, fmt.Errorf("client: %w", err)
	}
	name := c.cfg.NodeName
	if name == "" {
		name = fp.Hostname
	}
	n := events.Node{ID: c.id, Name: name, Datacenter: c.cfg.Datacenter, NodeClass: c.cfg.NodeClass,
		NodePool: c.cfg.NodePool, Attributes: fp.Attributes, Meta: c.cfg.Meta, Resources: fp.Resources,
		Reserved: c.cfg.Reserved, Drivers: fp.Drivers, HTTPAddr: c.cfg.HTTPAddr,
		Status: events.NodeStatusInitializing}
	if err := c.cfg.fingerprintNetwork(&n); err != nil { // network.go: addresses, ports, host volumes
		return events.Node{}, err
	}
	return n, nil
}

// restore starts a runner for every allocation the state directory holds.
func (c *Client) restore(runCtx context.Context) error {
	recs, bad, err := c.store.Allocs()
	if err != nil {
		return err
	}
	for name, err := range bad {
		c.log.Error("unreadable allocation record left in place", "file", name, "err", err)
	}
	for _, rec := range recs {
		if rec.Job == nil {
			c.log.Error("allocation record without a job", "alloc_id", rec.Alloc.ID)
			continue
		}
		r, err := c.newRunner(rec.Alloc, nil, rec)
		if err != nil {
			c.log.Error("cannot restore allocation", "alloc_id", rec.Alloc.ID, "err", err)
			continue
		}
		c.mu.Lock()
		c.mu.runners[rec.Alloc.ID] = &entry{r: r, jobVersion: rec.Job.Version}
		c.mu.dirty[rec.Alloc.ID] = true
		c.mu.Unlock()
		c.startRunner(runCtx, r)
	}
	if len(recs) > 0 {
		c.log.Info("restored allocations", "count", len(recs))
	}
	c.sweepDrivers(runCtx, recs, len(bad)) // sweep.go
	return nil
}

func (c *Client) newRunner(a events.Allocation, job *events.Job, restored *state.Alloc) (*allocrunner.Runner, error) {
	return allocrunner.New(allocrunner.Config{Alloc: a, Job: job, Restored: restored, Drivers: c.drivers,
		Root: filepath.Join(c.cfg.DataDir, "alloc"), Store: c.store, Clock: c.cfg.Clock, Logger: c.log,
		OnChange: c.allocChanged, Node: c.runnerNode(), Templates: &template.ServerSource{API: c.api, NodeID: c.id},
		LogMaxBytes: c.cfg.LogMaxBytes,
		LogMaxFiles: c.cfg.LogMaxFiles, Metrics: c.arMet, Hooks: c.csiHooks(), Services: c.services})
}

// runnerNode is the node a runner's tasks see (${node.*}, ${attr.*},
// ${meta.*}, NOMAD_DC, host volumes): the fingerprinted node.
func (c *Client) runnerNode() *events.Node {
	n := c.Node()
	if n.Datacenter == "" {
		n.Datacenter = c.cfg.Datacenter
	}
	return &n
}

func (c *Client) startRunner(runCtx context.Context, r *allocrunner.Runner) {
	c.runnerWG.Go(func() {
		r.Run(runCtx)
		if runCtx.Err() == nil {
			c.gc() // the runner may be collectable now
		}
	})
}

// allocChanged is the runners' OnChange: the allocation's state is to be sent.
func (c *Client) allocChanged(id string) {
	c.mu.Lock()
	c.mu.dirty[id] = true
	c.mu.Unlock()
	c.wakeUpdates()
}

func (c *Client) wakeUpdates() {
	select {
	case c.updateCh <- struct{}{}:
	default:
	}
}

// killAll kills every task without shutdown delay and waits for the
// runners to see them dead.
func (c *Client) killAll() {
	c.mu.Lock()
	var rs []*allocrunner.Runner
	for _, e := range c.mu.runners {
		rs = append(rs, e.r)
	}
	c.mu.Unlock()
	for _, r := range rs {
		r.Kill(events.TaskEvent{Type: events.TaskEventKilling, Message: "client shutting down"}, false)
	}
	for _, r := range rs {
		<-r.Done()
	}
}

// runnerCount and dirtyCount feed the gauges.
func (c *Client) runnerCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.mu.runners)
}

func (c *Client) dirtyCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.mu.dirty)
}

// Runner returns the runner of allocation id, for tests and status.
func (c *Client) Runner(id string) (*allocrunner.Runner, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.mu.runners[id]
	if !ok {
		return nil, false
	}
	return e.r, true
}

// logFailure logs a failed call to the servers: the first of a run at
// debug level (a dev agent's client starts before its server leads),
// later ones as warnings.
func (c *Client) logFailure(msg string, failures int, args ...any) {
	level := slog.LevelWarn
	if failures == 1 {
		level = slog.LevelDebug
	}
	c.log.Log(context.Background(), level, msg, append(args, "failures", failures)...)
}

// sleep waits d on the client's clock; false when ctx ended first.
func (c *Client) sleep(ctx context.Context, d time.Duration) bool {
	return clock.Sleep(ctx, c.cfg.Clock, d)
}

// backoff returns the wait before retry number n (from 1): exponential
// from RetryMin to RetryMax, with up to a quarter of jitter.
func (c *Client) backoff(n int) time.Duration {
	d := clock.Backoff(n, c.cfg.RetryMin, c.cfg.RetryMax)
	return d - time.Duration(float64(d)*0.25*c.randFloat())
}

func (c *Client) randFloat() float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mu.rand.Float64()
}
