package capacity

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/ordoplane/ordo/commands"
	ccmd "github.com/ordoplane/ordo/commands/capacity"
	lcmd "github.com/ordoplane/ordo/commands/launcher"
	"github.com/ordoplane/ordo/commands/node"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/launcher"
)

// Actor is the actor of the processor's commands.
const Actor = "system:capacity"

// retryAfter is how long a pass that failed waits before the next.
const retryAfter = time.Second

// Processor is capacity on demand; it runs on the leader.
type Processor struct {
	cfg   Config
	pools map[string]Pool
	log   *slog.Logger
	m     *metrics

	// What one Run keeps between passes (Run is one goroutine).
	t        *tracker
	idle     map[string]map[string]time.Time // pool → instance → idle since
	backoff  map[string]time.Time            // pool → no request before
	returned map[string]string               // instance → node, to deregister once the instance is gone

	// seen is the applied index the last finished pass had followed.
	seen atomic.Uint64
}

// Seen returns the applied index the last finished pass had followed:
// tests wait on it to know a pass saw a change.
func (p *Processor) Seen() uint64 { return p.seen.Load() }

// New returns a Processor; zero fields of cfg take DefaultConfig's values.
func New(cfg Config) (*Processor, error) {
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	p := &Processor{cfg: cfg, pools: map[string]Pool{}, log: cfg.Logger.With("processor", "capacity"),
		m: newMetrics(cfg.Registerer)}
	for _, pl := range cfg.Pools {
		p.pools[pl.Name] = pl
	}
	return p, nil
}

// Name implements supervisor.Processor.
func (p *Processor) Name() string { return "capacity" }

// Close unregisters the metrics.
func (p *Processor) Close() { p.m.unregister(p.cfg.Registerer) }

// Run implements supervisor.Processor: it restores what it follows, then
// passes after every applied entry and when a timer it set fires.
func (p *Processor) Run(ctx context.Context) error {
	p.t, p.idle, p.backoff, p.returned = newTracker(), map[string]map[string]time.Time{}, map[string]time.Time{}, map[string]string{}
	notify := p.cfg.State.Notifier()
	next, err := p.restore()
	if err != nil {
		return err
	}
	for {
		_, wake := notify.Applied()
		at, after, err := p.pass(ctx, &next)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			p.log.Warn("capacity pass failed; will retry", "err", err)
			after = retryAfter
		} else {
			p.seen.Store(at)
		}
		var tick <-chan time.Time
		if after > 0 {
			tick = p.cfg.Clock.After(after)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-wake:
		case <-tick:
		}
	}
}

func (p *Processor) restore() (uint64, error) {
	snap := p.cfg.State.ReadSnapshot()
	defer snap.Close()
	v := projections.NewView(snap)
	at, err := v.AppliedIndex()
	if err != nil {
		return 0, fmt.Errorf("capacity: applied index: %w", err)
	}
	if err := p.t.restore(v); err != nil {
		return 0, err
	}
	p.log.Info("capacity on demand started", "pools", len(p.pools), "requests", len(p.t.requests),
		"instances", len(p.t.instances), "index", at)
	return at + 1, nil
}

// pass follows the archive up to a snapshot's applied index and reads
// that same snapshot, so what it follows and what it reads agree; then it
// decides for every pool and acts. It returns the index it read at and
// when to look again without a state change (0: only on a change).
func (p *Processor) pass(ctx context.Context, next *uint64) (uint64, time.Duration, error) {
	snap := p.cfg.State.ReadSnapshot()
	v := projections.NewView(snap)
	at, err := v.AppliedIndex()
	if err != nil {
		snap.Close()
		return 0, 0, fmt.Errorf("capacity: applied index: %w", err)
	}
	if *next <= at {
		if err := p.t.follow(snap, *next, at); err != nil {
			snap.Close()
			return 0, 0, err
		}
		*next = at + 1
	}
	vw, err := p.t.read(v, p.pools)
	var gone map[string]bool
	if err == nil {
		gone, err = p.returnedGone(v)
	}
	snap.Close()
	if err != nil {
		return 0, 0, err
	}
	if err := p.deregisterReturned(ctx, gone); err != nil {
		return 0, 0, err
	}
	now := p.cfg.Clock.Now()
	var wake time.Duration
	for _, pool := range p.cfg.Pools {
		d := Decide(Input{Pool: pool, Now: now, Demand: *vw.demand[pool.Name], Requests: vw.requests[pool.Name],
			Instances: vw.instances[pool.Name], IdleSince: p.idle[pool.Name], BackoffUntil: p.backoff[pool.Name],
			Backoff: p.cfg.FailureBackoff})
		p.idle[pool.Name], p.backoff[pool.Name] = d.IdleSince, d.BackoffUntil
		p.m.outstanding.WithLabelValues(pool.Name).Set(float64(d.Open))
		p.m.waiting.WithLabelValues(pool.Name).Set(float64(vw.demand[pool.Name].Placements))
		if err := p.act(ctx, pool, vw.demand[pool.Name], d); err != nil {
			return 0, 0, err
		}
		if d.Wake > 0 && (wake == 0 || d.Wake < wake) {
			wake = d.Wake
		}
	}
	return at, wake, nil
}

func (p *Processor) submit(ctx context.Context, name string, c commands.Command) error {
	_, err := p.cfg.Pipeline.Run(ctx, name, commands.Request{Actor: Actor}, c)
	return err
}

// ignorable reports a command refused because the state moved on: the
// next pass decides again.
func ignorable(err error) bool {
	var ce *commands.ConflictError
	var nf *commands.NotFoundError
	return errors.As(err, &ce) || errors.As(err, &nf)
}

// act carries out d for pool.
func (p *Processor) act(ctx context.Context, pool Pool, dem *Demand, d Decision) error {
	log := p.log.With("pool", pool.Name, "label", pool.Label)
	for _, id := range d.Cleanup {
		log.Warn("node request failed; deleting it and backing off", "request", id, "until", d.BackoffUntil)
		if err := p.submit(ctx, "node-request.delete", lcmd.DeleteRequest{ID: id}); err != nil && !ignorable(err) {
			return fmt.Errorf("capacity: delete failed request %s: %w", id, err)
		}
	}
	for i := 0; i < d.Create; i++ {
		c := &ccmd.FileRequest{Pool: pool.Name, Label: pool.Label, Requestor: Requestor(pool.Name), Tenant: pool.Tenant,
			Evals: dem.Evals, Placements: dem.Placements, Supply: d.Supply + i}
		if err := p.submit(ctx, "capacity.file-request", c); err != nil {
			return fmt.Errorf("capacity: file node request for pool %s: %w", pool.Name, err)
		}
		p.m.filed.WithLabelValues(pool.Name).Inc()
		log.Info("node request filed for blocked evals", "request", c.ID(), "evals", dem.Evals,
			"placements", dem.Placements, "supply", d.Supply+i)
	}
	for _, id := range d.Release {
		log.Info("node request no longer needed; releasing it", "request", id, "placements", dem.Placements, "supply", d.Supply)
		if err := p.submit(ctx, "node-request.delete", lcmd.DeleteRequest{ID: id}); err != nil && !ignorable(err) {
			return fmt.Errorf("capacity: release request %s: %w", id, err)
		}
		p.m.released.WithLabelValues(pool.Name).Inc()
	}
	for _, r := range d.Return {
		if err := p.giveBack(ctx, log, r); err != nil {
			return err
		}
		p.m.returns.WithLabelValues(pool.Name).Inc()
	}
	return nil
}

// giveBack drains an idle instance's node and deletes its request, or
// the instance when it has no request.
func (p *Processor) giveBack(ctx context.Context, log *slog.Logger, r Return) error {
	log = log.With("instance", r.InstanceID, "node", r.NodeID, "request", r.RequestID, "idle", r.Idle)
	if r.Drain {
		if err := p.submit(ctx, "node.drain", node.UpdateDrain{ID: r.NodeID, Spec: &node.DrainSpec{}}); err != nil && !ignorable(err) {
			return fmt.Errorf("capacity: drain idle node %s: %w", r.NodeID, err)
		}
	}
	var err error
	if r.RequestID != "" {
		err = p.submit(ctx, "node-request.delete", lcmd.DeleteRequest{ID: r.RequestID})
	} else {
		err = p.submit(ctx, "instance.delete", lcmd.DeleteInstance{ID: r.InstanceID})
	}
	if err != nil && !ignorable(err) {
		return fmt.Errorf("capacity: return idle instance %s: %w", r.InstanceID, err)
	} else if err != nil {
		log.Info("returning idle instance deferred; the state moved on", "err", err)
		return nil
	}
	if r.NodeID != "" {
		p.returned[r.InstanceID] = r.NodeID
	}
	log.Info("idle instance returned")
	return nil
}

// returnedGone returns the returned instances that no longer exist.
func (p *Processor) returnedGone(v projections.View) (map[string]bool, error) {
	gone := map[string]bool{}
	for inst := range p.returned {
		_, err := launcher.GetInstance(v, inst)
		if errors.Is(err, projections.ErrNotFound) {
			gone[inst] = true
		} else if err != nil {
			return nil, fmt.Errorf("capacity: read returned instance %s: %w", inst, err)
		}
	}
	return gone, nil
}

// deregisterReturned removes the nodes of returned instances once the
// instances are gone, so they do not linger as down nodes.
func (p *Processor) deregisterReturned(ctx context.Context, gone map[string]bool) error {
	for inst, nodeID := range p.returned {
		if !gone[inst] {
			continue
		}
		if err := p.submit(ctx, "node.deregister", node.Deregister{ID: nodeID}); err != nil && !ignorable(err) {
			return fmt.Errorf("capacity: deregister node %s of returned instance %s: %w", nodeID, inst, err)
		}
		delete(p.returned, inst)
		p.log.Info("node of returned instance deregistered", "instance", inst, "node", nodeID)
	}
	return nil
}
