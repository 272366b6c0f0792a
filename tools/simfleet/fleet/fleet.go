package fleet

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Fleet is a set of simulated nodes.
type Fleet struct {
	cfg    Config
	client *client
	m      *metrics
	nodes  []*node
	// order is the seeded permutation Disconnect and Reconnect walk.
	order  []int
	starts chan struct{} // StartParallel slots
	ran    atomic.Bool
	ctlMu  sync.Mutex // serialises Disconnect and Reconnect
}

// New returns a fleet of cfg.Nodes nodes, all to be connected when Run starts.
func New(cfg Config) (*Fleet, error) {
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	c, err := newClient(cfg)
	if err != nil {
		return nil, err
	}
	f := &Fleet{cfg: cfg, client: c, m: newMetrics(), starts: make(chan struct{}, cfg.StartParallel)}
	f.nodes = make([]*node, cfg.Nodes)
	for i := range f.nodes {
		n, err := newNode(f, i)
		if err != nil {
			return nil, err
		}
		f.nodes[i] = n
	}
	f.order = rand.New(rand.NewPCG(cfg.Seed, 0x5eed)).Perm(cfg.Nodes)
	f.m.connected.Store(int64(cfg.Nodes))
	return f, nil
}

// Config returns the fleet's configuration with defaults applied.
func (f *Fleet) Config() Config { return f.cfg }

// FDsNeeded is how many open files the fleet may hold: a long-poll per
// node, the call and heartbeat connections per server, and a margin.
func (f *Fleet) FDsNeeded() uint64 {
	return uint64(f.cfg.Nodes) + uint64(2*f.cfg.CallConns*len(f.cfg.Servers)) + 64
}

// Run runs every node until ctx ends, then closes the fleet's connections.
// It fails at once when the open-file limit cannot hold the fleet, and
// when called twice.
func (f *Fleet) Run(ctx context.Context) error {
	if !f.ran.CompareAndSwap(false, true) {
		return errors.New("simfleet: Run called twice")
	}
	if err := raiseFDLimit(f.FDsNeeded()); err != nil {
		return err
	}
	var wg sync.WaitGroup
	for _, n := range f.nodes {
		wg.Go(func() { n.run(ctx) })
	}
	wg.Wait()
	f.client.close()
	return nil
}

// NodeIDs returns the nodes' ids by index.
func (f *Fleet) NodeIDs() []string {
	out := make([]string, len(f.nodes))
	for i, n := range f.nodes {
		out[i] = n.id
	}
	return out
}

// Disconnect disconnects round(fraction × Nodes) connected nodes, taken in
// a seeded order, and returns their ids. Each stops every call at once
// (its open long-poll is closed).
func (f *Fleet) Disconnect(fraction float64) []string { return f.set(fraction, false) }

// Reconnect reconnects round(fraction × Nodes) disconnected nodes (1: all),
// in the same seeded order, and returns their ids. Each registers,
// reports its allocations and heartbeats ready again.
func (f *Fleet) Reconnect(fraction float64) []string { return f.set(fraction, true) }

func (f *Fleet) set(fraction float64, want bool) []string {
	f.ctlMu.Lock()
	defer f.ctlMu.Unlock()
	k := int(math.Round(math.Max(0, math.Min(1, fraction)) * float64(len(f.nodes))))
	var ids []string
	for _, i := range f.order {
		if len(ids) == k {
			break
		}
		n := f.nodes[i]
		if n.setWant(want) {
			ids = append(ids, n.id)
			if want {
				f.m.connected.Add(1)
			} else {
				f.m.connected.Add(-1)
			}
		}
	}
	return ids
}

// Stats returns the fleet's counters.
func (f *Fleet) Stats() Stats { return f.m.stats(len(f.nodes)) }

// TakeHeartbeatLatencies returns, sorted, the latencies of the heartbeats
// answered since the last call (at most about a million are kept).
func (f *Fleet) TakeHeartbeatLatencies() []time.Duration { return f.m.takeSamples() }

// Collectors returns the fleet's Prometheus collectors, named simfleet_*.
func (f *Fleet) Collectors() []prometheus.Collector { return f.m.collectors(len(f.nodes)) }
