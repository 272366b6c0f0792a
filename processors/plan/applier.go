package plan

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ordoplane/ordo/clock"
	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/node"
	cplan "github.com/ordoplane/ordo/commands/plan"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/processors/defaults"
	"github.com/ordoplane/ordo/processors/scheduler"
	"github.com/ordoplane/ordo/projections/evals"
	"github.com/ordoplane/ordo/projections/nodes"
)

// States gives the applier the latest state.
type States interface {
	State() (st scheduler.State, release func(), err error)
}

// Config configures an Applier.
type Config struct {
	// Pipeline commits; States reads the latest state. Required.
	Pipeline *commands.Pipeline
	States   States
	// Tracker is the N11 rejection tracker; nil or disabled tracks nothing.
	Tracker *Tracker
	// Clock times plan applies and gives the time plans are evaluated at;
	// default clock.System.
	Clock clock.Clock
	// Logger; default slog.Default().
	Logger *slog.Logger
	// Registerer receives the applier's metrics; nil registers none.
	Registerer prometheus.Registerer
}

type request struct {
	ctx   context.Context
	plan  *scheduler.Plan
	evals []events.Evaluation
	reply chan response
}

type response struct {
	res   Result
	index uint64
	err   error
}

// Applier is the plan applier.
type Applier struct {
	cfg     Config
	eval    Evaluator
	queue   chan request
	metrics *metrics
}

// DefaultConfig returns the defaults, without the required fields.
func DefaultConfig() Config {
	return Config{Clock: clock.System{}, Logger: slog.Default()}
}

// Validate reports a Config that cannot work.
func (c Config) Validate() error {
	if c.Pipeline == nil || c.States == nil {
		return errors.New("plan: Pipeline and States are required")
	}
	return nil
}

// New returns an Applier.
func New(cfg Config) (*Applier, error) {
	defaults.Fill(&cfg, DefaultConfig())
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Applier{cfg: cfg, eval: Evaluator{Tracker: cfg.Tracker}, queue: make(chan request),
		metrics: newMetrics(cfg.Registerer)}, nil
}

// Close unregisters the metrics.
func (a *Applier) Close() { a.metrics.unregister() }

// Name implements supervisor.Processor.
func (a *Applier) Name() string { return "plan-applier" }

// Submit queues plan with its eval updates and waits for the outcome.
func (a *Applier) Submit(ctx context.Context, p *scheduler.Plan, evals []events.Evaluation) (Result, uint64, error) {
	req := request{ctx: ctx, plan: p, evals: evals, reply: make(chan response, 1)}
	a.metrics.queued.Inc()
	defer a.metrics.queued.Dec()
	select {
	case a.queue <- req:
	case <-ctx.Done():
		return Result{}, 0, ctx.Err()
	}
	select {
	case r := <-req.reply:
		return r.res, r.index, r.err
	case <-ctx.Done():
		return Result{}, 0, ctx.Err()
	}
}

// Run applies plans until ctx ends. Plans are verified and committed in
// arrival order, one commit in raft at a time; the next plan is verified
// while the previous one commits, against the latest state plus the
// in-flight placements (see placedOverlay).
func (a *Applier) Run(ctx context.Context) error {
	var inflight *commitJob
	defer func() {
		if inflight != nil {
			<-inflight.done
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return nil
		case req := <-a.queue:
			start := a.cfg.Clock.Now()
			job, r := a.prepare(req, inflight)
			if inflight != nil {
				<-inflight.done
				// A refused plan re-plans past the commit the overlay
				// stood in for.
				if job != nil && job.res.RefreshIndex > 0 {
					job.res.RefreshIndex = max(job.res.RefreshIndex, inflight.index)
				}
				if job == nil && r.res.RefreshIndex > 0 {
					r.res.RefreshIndex = max(r.res.RefreshIndex, inflight.index)
					r.index = max(r.index, inflight.index)
				}
			}
			inflight = nil
			if job == nil {
				a.metrics.latency.Observe(a.cfg.Clock.Now().Sub(start).Seconds())
				req.reply <- r
				continue
			}
			inflight = job
			go func() {
				defer close(job.done)
				r := a.commit(ctx, job)
				job.index = r.index
				a.metrics.latency.Observe(a.cfg.Clock.Now().Sub(start).Seconds())
				req.reply <- r
			}()
		}
	}
}

// commitJob is a verified plan on its way through raft.
type commitJob struct {
	req    request
	res    Result
	commit cplan.Commit
	// index is the commit's index, set before done closes.
	index uint64
	done  chan struct{}
}

// finished reports whether the job's commit has returned.
func (j *commitJob) finished() bool {
	select {
	case <-j.done:
		return true
	default:
		return false
	}
}

// prepare verifies req's plan; it returns the commit to make, or the
// response to send at once when there is nothing to commit.
func (a *Applier) prepare(req request, inflight *commitJob) (*commitJob, response) {
	// Decide before taking the snapshot: a commit that finished by now is
	// in the snapshot; one still running may or may not be, and the
	// overlay is safe either way.
	overlay := inflight != nil && !inflight.finished()
	base, release, err := a.cfg.States.State()
	if err != nil {
		return nil, response{err: err}
	}
	defer release()
	st := base
	if overlay {
		st = withPlaced(base, inflight.res.Placements)
	}
	res := a.eval.Evaluate(req.plan, st, a.cfg.Clock.Now())
	if e, ok := base.(interface{ Err() error }); ok && e.Err() != nil {
		return nil, response{err: fmt.Errorf("verify plan %s: %w", req.plan.EvalID, e.Err())}
	}
	a.movesRefused(req.plan, &res)
	commit := cplan.Commit{EvalID: req.plan.EvalID, Placements: res.Placements, Deployment: res.Deployment,
		NodeIndexes: map[string]uint64{}}
	commit.Updates = append(append(commit.Updates, res.Stops...), res.Updates...)
	for _, p := range res.Placements {
		n, ok := st.Node(p.NodeID)
		if !ok {
			return nil, response{err: fmt.Errorf("plan %s: node %s vanished", req.plan.EvalID, p.NodeID)}
		}
		commit.NodeIndexes[p.NodeID] = n.ModifyIndex
	}
	// Follow-ups commit with any part of the plan, since its updates may
	// point at them; the eval's own update only with the whole plan.
	for _, f := range res.FollowUps {
		f.PreviousEval = req.plan.EvalID
		commit.Evals = append(commit.Evals, f)
	}
	if res.FullCommit() {
		commit.Evals = append(commit.Evals, req.evals...)
	}
	if len(commit.Placements) == 0 && len(commit.Updates) == 0 && commit.Deployment == nil && len(commit.Evals) == 0 {
		return nil, response{res: res, index: st.Index()}
	}
	return &commitJob{req: req, res: res, commit: commit, done: make(chan struct{})}, response{}
}

// commit sends a verified plan through the command path.
func (a *Applier) commit(ctx context.Context, job *commitJob) response {
	res, commit, req := job.res, job.commit, job.req
	log := a.cfg.Logger.With("eval_id", req.plan.EvalID, "job_id", req.plan.JobID)
	out, err := a.cfg.Pipeline.Run(ctx, "plan.commit", commands.Request{Actor: "system:plan-applier"}, commit)
	var conflict *commands.ConflictError
	if errors.As(err, &conflict) && conflict.Precondition.Table == evals.Table {
		// The eval was deleted while it was planned: nothing committed and
		// nothing to re-plan.
		a.metrics.rejected.Inc()
		log.Info("plan refused: its eval was deleted", "reason", conflict.Reason)
		return response{err: fmt.Errorf("commit plan %s: %w", req.plan.EvalID, ErrEvalDeleted), index: out.Index}
	}
	if errors.As(err, &conflict) {
		// A node changed between verification and apply: nothing committed;
		// the worker re-plans on newer state.
		a.metrics.rejected.Inc()
		log.Info("plan rejected at apply", "reason", conflict.Reason)
		res = Result{RejectedNodes: nodeIDs(commit.NodeIndexes), RefreshIndex: out.Index}
		// The node whose change refused the commit counts as a rejection,
		// as the nodes refused while verifying do (tracker.go).
		if conflict.Precondition.Table == nodes.Table && a.cfg.Tracker.Add(conflict.Precondition.Key, a.cfg.Clock.Now()) {
			a.markIneligible(ctx, log, []string{conflict.Precondition.Key})
		}
		return response{res: res, index: out.Index}
	}
	if err != nil {
		return response{err: fmt.Errorf("commit plan %s: %w", req.plan.EvalID, err)}
	}
	if res.FullCommit() {
		a.metrics.committed.Inc()
	} else {
		a.metrics.partial.Inc()
		res.RefreshIndex = max(res.RefreshIndex, out.Index)
		log.Info("plan partly committed", "rejected_nodes", res.RejectedNodes, "reasons", res.Reasons)
	}
	a.metrics.placed.Add(float64(len(res.Placements)))
	a.markIneligible(ctx, log, res.IneligibleNodes)
	return response{res: res, index: out.Index}
}

// markIneligible marks ineligible the nodes the rejection tracker named
// for too many plan rejections (N11).
func (a *Applier) markIneligible(ctx context.Context, log *slog.Logger, ids []string) {
	for _, id := range ids {
		if _, err := a.cfg.Pipeline.Run(ctx, "node.eligibility", commands.Request{Actor: "system:plan-applier"},
			node.UpdateEligibility{ID: id, Eligibility: events.NodeIneligible}); err != nil {
			log.Warn("marking node ineligible failed", "node_id", id, "err", err)
		} else {
			log.Warn("node marked ineligible after repeated plan rejections", "node_id", id)
		}
	}
}

// movesRefused counts and reports the nodes res refused because the plan
// would have moved an allocation onto them: a scheduler that minted an
// allocation's id twice, which no plan should do.
func (a *Applier) movesRefused(p *scheduler.Plan, res *Result) {
	for _, id := range res.RejectedNodes {
		if ids := res.Moved[id]; len(ids) > 0 {
			a.metrics.moves.Inc()
			a.cfg.Logger.Warn("plan refused on a node: it would move an allocation there", "eval_id", p.EvalID,
				"job_id", p.JobID, "node_id", id, "alloc_ids", ids)
		}
	}
}

func nodeIDs(m map[string]uint64) []string {
	out := make([]string, 0, len(m))
	for id := range m {
		out = append(out, id)
	}
	return out
}

type metrics struct {
	reg                                  prometheus.Registerer
	queued                               prometheus.Gauge
	latency                              prometheus.Histogram
	committed, partial, rejected, placed prometheus.Counter
	// moves counts nodes refused for a placement that would move an
	// allocation (ReasonAllocElsewhere).
	moves prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		reg: reg,
		queued: prometheus.NewGauge(prometheus.GaugeOpts{Name: "ordo_plan_queue_depth",
			Help: "Plans waiting for the plan applier."}),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "ordo_plan_apply_seconds",
			Help: "Time to verify and commit one plan.", Buckets: prometheus.ExponentialBuckets(0.0001, 2, 16)}),
		committed: prometheus.NewCounter(prometheus.CounterOpts{Name: "ordo_plans_committed_total", Help: "Plans committed whole."}),
		partial:   prometheus.NewCounter(prometheus.CounterOpts{Name: "ordo_plans_partial_total", Help: "Plans committed in part."}),
		rejected:  prometheus.NewCounter(prometheus.CounterOpts{Name: "ordo_plans_rejected_total", Help: "Plans rejected at apply."}),
		placed:    prometheus.NewCounter(prometheus.CounterOpts{Name: "ordo_allocs_placed_total", Help: "Allocations committed by the plan applier."}),
		moves: prometheus.NewCounter(prometheus.CounterOpts{Name: "ordo_plan_alloc_moves_refused_total",
			Help: "Nodes refused a plan's part because it would move an allocation there from another node (a scheduler bug)."}),
	}
	if reg != nil {
		reg.MustRegister(m.queued, m.latency, m.committed, m.partial, m.rejected, m.placed, m.moves)
	}
	return m
}

func (m *metrics) unregister() {
	if m.reg == nil {
		return
	}
	for _, c := range []prometheus.Collector{m.queued, m.latency, m.committed, m.partial, m.rejected, m.placed, m.moves} {
		m.reg.Unregister(c)
	}
}
