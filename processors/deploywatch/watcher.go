package deploywatch

import (
	"context"
	"errors"
	"fmt"
	"github.com/ordoplane/ordo/clock"
	"github.com/ordoplane/ordo/processors/defaults"
	"log/slog"
	"sort"
	"time"

	"github.com/ordoplane/ordo/processors/follow"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/deployment"
	"github.com/ordoplane/ordo/commands/job"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/allocs"
	"github.com/ordoplane/ordo/projections/deployments"
	"github.com/ordoplane/ordo/projections/jobs"
	"github.com/ordoplane/ordo/storage/archive"
)

// Submitter and State are what the watcher is given (package follow).
type (
	Submitter = follow.Submitter
	State     = follow.State
)

// Config configures a Watcher.
type Config struct {
	// Pipeline receives the decisions; required.
	Pipeline Submitter
	// State is read for deployments, jobs and allocations; required.
	State State
	// Clock tells when a deployment's progress deadline passes; default
	// clock.System.
	Clock clock.Clock
	// RetryInterval is the wait before a failed command is tried again;
	// default 1s.
	RetryInterval time.Duration
	// Logger; default slog.Default().
	Logger *slog.Logger
	// Registerer receives the watcher's metrics; nil registers none.
	Registerer prometheus.Registerer
}

// DefaultConfig returns the defaults, without the required fields.
func DefaultConfig() Config {
	return Config{Clock: clock.System{}, RetryInterval: time.Second, Logger: slog.Default()}
}

// Validate reports a Config that cannot work.
func (c Config) Validate() error {
	return follow.Validate("deploywatch", c.Pipeline, c.State, c.RetryInterval)
}

// Watcher watches deployments while this server leads.
type Watcher struct {
	cfg       Config
	log       *slog.Logger
	active    prometheus.Gauge
	decisions *prometheus.CounterVec
}

// New returns a Watcher, registering its metrics with cfg.Registerer.
func New(cfg Config) (*Watcher, error) {
	defaults.Fill(&cfg, DefaultConfig())
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	w := &Watcher{cfg: cfg, log: cfg.Logger,
		active: prometheus.NewGauge(prometheus.GaugeOpts{Name: "ordo_deploywatch_active_deployments",
			Help: "Active deployments the leader's deployment watcher follows."}),
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ordo_deploywatch_decisions_total",
			Help: "Deployment decisions recorded by the watcher, by outcome (running, progress, promoted, successful, failed, cancelled, reverted)."},
			[]string{"outcome"}),
	}
	if cfg.Registerer != nil {
		if err := cfg.Registerer.Register(w.active); err != nil {
			return nil, fmt.Errorf("deploywatch: register metrics: %w", err)
		}
		if err := cfg.Registerer.Register(w.decisions); err != nil {
			return nil, fmt.Errorf("deploywatch: register metrics: %w", err)
		}
	}
	return w, nil
}

// Name implements supervisor.Processor.
func (w *Watcher) Name() string { return "deploywatch" }

// actor names the watcher in the entries it appends.
const actor = "system:deploywatch"

// ref is what the watcher keeps of an active deployment.
type ref struct {
	job      string // jobKey
	deadline time.Time
}

func jobKey(ns, id string) string { return ns + "\x00" + id }

// run is one Run's state, owned by its goroutine.
type run struct {
	w *Watcher
	// tracked are the active deployments, by id.
	tracked map[string]*ref
	// dirty are deployments, and jobKeys, to decide about again.
	dirty, dirtyJobs map[string]bool
	// moves are deployments to move from initializing to pending (N3).
	moves map[string]bool
	// retry are deployments whose command failed, tried again after
	// RetryInterval; moveRetry the same for moves.
	retry, moveRetry map[string]bool
}

// Run implements supervisor.Processor: it watches deployments until ctx
// ends. It starts with a full scan of the deployments and then follows
// the archive from the index it scanned at.
func (w *Watcher) Run(ctx context.Context) error {
	r := &run{w: w, tracked: map[string]*ref{}, dirty: map[string]bool{}, dirtyJobs: map[string]bool{},
		moves: map[string]bool{}, retry: map[string]bool{}, moveRetry: map[string]bool{}}
	defer w.active.Set(0)
	next, err := r.restore()
	if err != nil {
		return err
	}
	notify := w.cfg.State.Notifier()
	clock := w.cfg.Clock
	for {
		applied, wake := notify.Applied()
		if next <= applied {
			if err := r.consume(next, applied); err != nil {
				return err
			}
			next = applied + 1
		}
		if err := r.act(ctx); err != nil {
			return err
		}
		w.active.Set(float64(len(r.tracked)))

		var again <-chan time.Time
		if wait, ok := r.wait(clock.Now()); ok {
			again = clock.After(wait)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-wake:
		case <-again:
			r.due(clock.Now())
		}
	}
}

// wait returns how long until the next retry or progress deadline.
func (r *run) wait(now time.Time) (time.Duration, bool) {
	var (
		d  time.Duration
		ok bool
	)
	if len(r.retry) > 0 || len(r.moveRetry) > 0 {
		d, ok = r.w.cfg.RetryInterval, true
	}
	for _, t := range r.tracked {
		if t.deadline.IsZero() {
			continue
		}
		if until := max(t.deadline.Sub(now), 0); !ok || until < d {
			d, ok = until, true
		}
	}
	return d, ok
}

// due marks what the clock made due: retries, and deployments past their
// progress deadline.
func (r *run) due(now time.Time) {
	for id := range r.retry {
		r.dirty[id] = true
	}
	clear(r.retry)
	for id := range r.moveRetry {
		r.moves[id] = true
	}
	clear(r.moveRetry)
	for id, t := range r.tracked {
		if !t.deadline.IsZero() && !now.Before(t.deadline) {
			r.dirty[id] = true
		}
	}
}

// restore reads every deployment: the active ones are tracked (and the
// initializing ones a previous leader left are moved), and returns the
// first index to follow the archive from.
func (r *run) restore() (uint64, error) {
	snap := r.w.cfg.State.ReadSnapshot()
	defer snap.Close()
	v := projections.NewView(snap)
	at, err := v.AppliedIndex()
	if err != nil {
		return 0, err
	}
	err = deployments.Scan(v, deployments.Query{}, func(d *deployments.Deployment) error {
		r.seen(&d.Deployment)
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("deploywatch: scan deployments: %w", err)
	}
	return at + 1, nil
}

// seen records a deployment as stored or upserted.
func (r *run) seen(d *events.Deployment) {
	if !d.Active() {
		if r.tracked[d.ID] != nil {
			r.dirty[d.ID] = true // read once more, to be dropped
		}
		return
	}
	if r.tracked[d.ID] == nil {
		r.tracked[d.ID] = &ref{job: jobKey(d.Namespace, d.JobID)}
	}
	r.dirty[d.ID] = true
	if d.Status == events.DeploymentStatusInitializing {
		r.moves[d.ID] = true
	}
}

// consume reads the archive from..to and marks what changed.
func (r *run) consume(from, to uint64) error {
	snap := r.w.cfg.State.ReadSnapshot()
	defer snap.Close()
	v := projections.NewView(snap)
	// jobOf marks the job of an allocation dirty, when a deployment of
	// some job is watched at all.
	jobOf := func(id string) error {
		if len(r.tracked) == 0 {
			return nil
		}
		a, err := allocs.Get(v, id)
		if errors.Is(err, projections.ErrNotFound) {
			return nil
		} else if err != nil {
			return err
		}
		r.dirtyJobs[jobKey(a.Namespace, a.JobID)] = true
		return nil
	}
	err := archive.Scan(snap, from, to, func(_ uint64, _ uint32, data []byte) error {
		ev, err := events.DecodeEvent(data)
		if err != nil {
			return err
		}
		switch ev.Type {
		case "DeploymentUpserted", "DeploymentStatusUpdated", "JobRegistered", "JobDeregistered",
			"AllocsPlaced", "AllocsClientUpdated", "AllocsDesiredUpdated":
		default:
			return nil
		}
		p, err := events.Decode(ev)
		if err != nil {
			return err
		}
		switch p := p.(type) {
		case *events.DeploymentUpserted:
			r.seen(&p.Deployment)
		case *events.DeploymentStatusUpdated:
			r.dirty[p.ID] = true
		case *events.JobRegistered:
			r.dirtyJobs[jobKey(p.Job.Namespace, p.Job.ID)] = true
		case *events.JobDeregistered:
			r.dirtyJobs[jobKey(p.Namespace, p.ID)] = true
		case *events.AllocsPlaced:
			for _, a := range p.Allocs {
				r.dirtyJobs[jobKey(a.Namespace, a.JobID)] = true
			}
		case *events.AllocsClientUpdated:
			for _, u := range p.Updates {
				if u.DeploymentStatus != nil || u.ClientStatus == events.AllocClientFailed ||
					u.ClientStatus == events.AllocClientComplete || u.ClientStatus == events.AllocClientLost {
					if err := jobOf(u.ID); err != nil {
						return err
					}
				}
			}
		case *events.AllocsDesiredUpdated:
			for _, u := range p.Updates {
				if err := jobOf(u.ID); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("deploywatch: follow the archive from %d: %w", from, err)
	}
	return nil
}

// act moves initializing deployments to pending (N3) and decides about
// every tracked deployment marked dirty, in id order.
func (r *run) act(ctx context.Context) error {
	moves := sortedKeys(r.moves)
	clear(r.moves)
	for _, id := range moves {
		if err := r.w.move(ctx, id); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			r.w.log.Warn("moving deployment to pending failed; will retry", "deployment_id", id, "err", err)
			r.moveRetry[id] = true
		}
	}
	var ids []string
	for id, t := range r.tracked {
		if r.dirty[id] || r.dirtyJobs[t.job] {
			ids = append(ids, id)
		}
	}
	clear(r.dirty)
	clear(r.dirtyJobs)
	if len(ids) == 0 {
		return nil
	}
	sort.Strings(ids)
	snap := r.w.cfg.State.ReadSnapshot()
	defer snap.Close()
	v := projections.NewView(snap)
	now := r.w.cfg.Clock.Now()
	for _, id := range ids {
		in, modify, err := read(v, id)
		if err != nil {
			return err
		}
		if in == nil || !in.Deployment.Active() {
			delete(r.tracked, id)
			continue
		}
		dec := Decide(*in, now)
		r.tracked[id].deadline = dec.Deadline
		if dec.Deployment == nil {
			continue
		}
		if err := r.w.record(ctx, in, modify, dec); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			var ce *commands.ConflictError
			if !errors.As(err, &ce) {
				r.w.log.Warn("recording deployment decision failed; will retry", "deployment_id", id,
					"job_id", in.Deployment.JobID, "outcome", dec.Outcome, "err", err)
			}
			// A conflict is a deployment changed since it was read: the
			// change is in the archive, but try again anyway.
			r.retry[id] = true
		}
	}
	return nil
}

// read returns the input to decide about deployment id on, and its modify
// index; nil when it is gone.
func read(v projections.View, id string) (*Input, uint64, error) {
	d, err := deployments.Get(v, id)
	if errors.Is(err, projections.ErrNotFound) {
		return nil, 0, nil
	} else if err != nil {
		return nil, 0, err
	}
	in := &Input{Deployment: d.Deployment, Versions: map[uint64]*events.Job{}}
	j, err := jobs.Get(v, d.Namespace, d.JobID)
	switch {
	case errors.Is(err, projections.ErrNotFound):
		return in, d.ModifyIndex, nil
	case err != nil:
		return nil, 0, err
	}
	in.Job = &j.Job
	vs, err := jobs.Versions(v, d.Namespace, d.JobID)
	if err != nil {
		return nil, 0, err
	}
	for _, x := range vs {
		in.Versions[x.Version] = &x.Job
	}
	list, err := allocs.ByJob(v, d.Namespace, d.JobID)
	if err != nil {
		return nil, 0, err
	}
	for _, a := range list {
		in.Allocs = append(in.Allocs, &a.Allocation)
	}
	return in, d.ModifyIndex, nil
}

// record submits a decision, logs it and counts it.
func (w *Watcher) record(ctx context.Context, in *Input, modify uint64, dec Decision) error {
	cmd := deployment.Progress{Deployment: *dec.Deployment, ModifyIndex: modify, Eval: dec.Eval, Revert: dec.Revert}
	out, err := w.cfg.Pipeline.Run(ctx, "deployment.progress", commands.Request{Actor: actor}, cmd)
	if err != nil {
		return err
	}
	outcome := dec.Outcome
	if outcome == OutcomeNone {
		outcome = OutcomeProgress
	}
	w.decisions.WithLabelValues(outcome).Inc()
	log := w.log.With("deployment_id", in.Deployment.ID, "job_id", in.Deployment.JobID, "namespace", in.Deployment.Namespace,
		"job_version", in.Deployment.JobVersion, "index", out.Index)
	switch outcome {
	case OutcomeProgress, OutcomeRunning:
		log.Debug("deployment progress", "outcome", outcome, "status", dec.Deployment.Status)
	default:
		log.Info("deployment "+outcome, "status", dec.Deployment.Status, "description", dec.Deployment.StatusDescription,
			"revert", dec.Revert)
	}
	if dec.Revert {
		w.decisions.WithLabelValues("reverted").Inc()
	}
	return nil
}

// maxAttempts bounds how often a move is decided again after its decision
// went stale.
const maxAttempts = 3

// move moves deployment id to pending. A deployment gone or no longer
// initializing needs nothing.
func (w *Watcher) move(ctx context.Context, id string) error {
	req := commands.Request{Actor: actor}
	for attempt := 1; ; attempt++ {
		_, err := w.cfg.Pipeline.Run(ctx, "deployment.pending", req, job.MarkDeploymentPending{ID: id})
		var (
			nf *commands.NotFoundError
			ce *commands.ConflictError
		)
		switch {
		case err == nil:
			w.log.Debug("deployment pending", "deployment_id", id)
			return nil
		case errors.As(err, &nf):
			return nil
		case errors.As(err, &ce) && attempt < maxAttempts:
			continue
		}
		return err
	}
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
