package drainer

import (
	"context"
	"errors"
	"fmt"
	"github.com/ordoplane/ordo/clock"
	"github.com/ordoplane/ordo/processors/defaults"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/ordoplane/ordo/processors/follow"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/node"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/allocs"
	"github.com/ordoplane/ordo/projections/jobs"
	"github.com/ordoplane/ordo/projections/nodes"
)

// Submitter and State are what the drainer is given (package follow).
type (
	Submitter = follow.Submitter
	State     = follow.State
)

// Config configures a Drainer.
type Config struct {
	// Pipeline receives the marks and completions; required.
	Pipeline Submitter
	// State is read for draining nodes; required.
	State State
	// Clock decides when drain deadlines pass; default clock.System.
	Clock clock.Clock
	// RetryInterval is the wait before a failed command is tried again;
	// default 1s.
	RetryInterval time.Duration
	// Logger; default slog.Default().
	Logger *slog.Logger
	// Registerer receives the drainer's metrics; nil registers none.
	Registerer prometheus.Registerer
}

// DefaultConfig returns the defaults, without the required fields.
func DefaultConfig() Config {
	return Config{Clock: clock.System{}, RetryInterval: time.Second, Logger: slog.Default()}
}

// Validate reports a Config that cannot work.
func (c Config) Validate() error {
	return follow.Validate("drainer", c.Pipeline, c.State, c.RetryInterval)
}

// Drainer drains nodes while this server leads.
type Drainer struct {
	cfg      Config
	log      *slog.Logger
	draining prometheus.Gauge
	marked   *prometheus.CounterVec
	complete prometheus.Counter
	// seen is the applied index of the snapshot the last finished pass
	// decided on, its commands done.
	seen atomic.Uint64
}

// New returns a Drainer; zero fields of cfg take DefaultConfig's values.
func New(cfg Config) (*Drainer, error) {
	defaults.Fill(&cfg, DefaultConfig())
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	d := &Drainer{cfg: cfg, log: cfg.Logger,
		draining: prometheus.NewGauge(prometheus.GaugeOpts{Name: "ordo_drainer_draining_nodes",
			Help: "Nodes draining, as the leader's drainer last saw them."}),
		marked: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ordo_drainer_allocs_marked_total",
			Help: "Allocations the drainer marked to migrate, by reason (paced, system, deadline)."}, []string{"reason"}),
		complete: prometheus.NewCounter(prometheus.CounterOpts{Name: "ordo_drainer_drains_completed_total",
			Help: "Node drains the drainer completed."}),
	}
	if cfg.Registerer != nil {
		cfg.Registerer.MustRegister(d.draining, d.marked, d.complete)
	}
	return d, nil
}

// Close unregisters the drainer's metrics.
func (d *Drainer) Close() {
	if r := d.cfg.Registerer; r != nil {
		r.Unregister(d.draining)
		r.Unregister(d.marked)
		r.Unregister(d.complete)
	}
}

// Name implements supervisor.Processor.
func (d *Drainer) Name() string { return "drainer" }

// Seen returns the applied index of the snapshot the drainer's last
// finished pass decided on: every command that pass asked for has
// returned. Tests wait on it to know the drainer has caught up.
func (d *Drainer) Seen() uint64 { return d.seen.Load() }

// actor names the drainer in the entries it appends.
const actor = "system:drainer"

// Run implements supervisor.Processor: each pass reads the projections,
// decides, and submits the marks and completions; it then waits for a
// change to the nodes table (and, while a node drains, to the allocs and
// jobs tables), for the next force deadline, or after a failure for
// RetryInterval.
func (d *Drainer) Run(ctx context.Context) error {
	defer d.draining.Set(0)
	notify := d.cfg.State.Notifier()
	for {
		// Take the watch channels before reading, so no change is missed.
		nodesCh, allocsCh, jobsCh := notify.Table(nodes.Table), notify.Table(allocs.Table), notify.Table(jobs.Table)
		s, at, err := d.read()
		if err != nil {
			return err
		}
		now := d.cfg.Clock.Now()
		p := decide(s, now.UnixNano())
		d.draining.Set(float64(len(s.Nodes)))
		failed := d.act(ctx, p)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if !failed {
			d.seen.Store(at)
		}
		var retry, deadline <-chan time.Time
		if failed {
			retry = d.cfg.Clock.After(d.cfg.RetryInterval)
		}
		if p.Next != 0 {
			deadline = d.cfg.Clock.After(time.Duration(p.Next - now.UnixNano()))
		}
		if len(s.Nodes) == 0 {
			allocsCh, jobsCh = nil, nil // nothing to drain: only a node change matters
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-nodesCh:
		case <-allocsCh:
		case <-jobsCh:
		case <-deadline:
		case <-retry:
		}
	}
}

// read loads decide's state from a snapshot and returns its applied index.
func (d *Drainer) read() (state, uint64, error) {
	snap := d.cfg.State.ReadSnapshot()
	defer snap.Close()
	v := projections.NewView(snap)
	at, err := v.AppliedIndex()
	if err != nil {
		return state{}, 0, fmt.Errorf("drainer: applied index: %w", err)
	}
	s, err := load(v)
	return s, at, err
}

// markBatch bounds the allocations of one MarkMigrate entry.
const markBatch = 500

// act submits p's marks, then its completions, and reports whether a
// command failed (it is decided again on the next pass).
func (d *Drainer) act(ctx context.Context, p plan) (failed bool) {
	req := commands.Request{Actor: actor}
	for start := 0; start < len(p.Marks); start += markBatch {
		batch := p.Marks[start:min(start+markBatch, len(p.Marks))]
		ids := make([]string, len(batch))
		for i, m := range batch {
			ids[i] = m.AllocID
		}
		if _, err := d.cfg.Pipeline.Run(ctx, "node.drain-migrate", req, node.MarkMigrate{AllocIDs: ids}); err != nil {
			d.warn(ctx, "marking allocations to migrate failed; will retry", "", err)
			return true
		}
		d.logMarks(batch)
	}
	for _, n := range p.Complete {
		_, err := d.cfg.Pipeline.Run(ctx, "node.drain-complete", req, node.CompleteDrain{ID: n.ID, ModifyIndex: n.ModifyIndex})
		var nf *commands.NotFoundError
		switch {
		case err == nil:
			d.complete.Inc()
			d.log.Info("node drain complete; the node stays ineligible", "node_id", n.ID)
		case errors.As(err, &nf):
			// Deregistered meanwhile.
		default:
			d.warn(ctx, "completing a node drain failed; will retry", n.ID, err)
			failed = true
		}
	}
	return failed
}

// logMarks logs and counts marked allocations, one line per node and reason.
func (d *Drainer) logMarks(batch []mark) {
	type key struct {
		node   string
		reason reason
	}
	counts := map[key]int{}
	var order []key
	for _, m := range batch {
		k := key{m.NodeID, m.Reason}
		if counts[k] == 0 {
			order = append(order, k)
		}
		counts[k]++
		d.marked.WithLabelValues(string(m.Reason)).Inc()
	}
	for _, k := range order {
		msg := "allocations marked to migrate off a draining node"
		if k.reason == reasonDeadline {
			msg = "drain deadline passed: remaining allocations marked to migrate"
		}
		d.log.Info(msg, "node_id", k.node, "count", counts[k], "reason", string(k.reason))
	}
}

// warn logs a failed command at warn level, or at debug for a conflict
// (the state moved on; the next pass decides again) or a shutdown.
func (d *Drainer) warn(ctx context.Context, msg, nodeID string, err error) {
	var ce *commands.ConflictError
	level := slog.LevelWarn
	if errors.As(err, &ce) || ctx.Err() != nil {
		level = slog.LevelDebug
	}
	args := []any{"err", err}
	if nodeID != "" {
		args = append(args, "node_id", nodeID)
	}
	d.log.Log(ctx, level, msg, args...)
}
