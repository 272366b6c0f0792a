package gc

import (
	"errors"
	"fmt"
	"time"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/services"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/allocs"
	"github.com/ordoplane/ordo/projections/deployments"
	"github.com/ordoplane/ordo/projections/evals"
	"github.com/ordoplane/ordo/projections/jobs"
	"github.com/ordoplane/ordo/projections/nodes"
)

// Thresholds are how long a finished object is kept, by kind; Nomad's
// server settings of the same names. Zero collects as soon as finished.
type Thresholds struct {
	// Eval is eval_gc_threshold, for evals of service and system jobs;
	// default 1h.
	Eval time.Duration
	// BatchEval is batch_eval_gc_threshold, for evals of batch jobs;
	// default 24h.
	BatchEval time.Duration
	// Job is job_gc_threshold, for dead jobs; default 4h.
	Job time.Duration
	// Node is node_gc_threshold, for down nodes; default 24h.
	Node time.Duration
	// Deployment is deployment_gc_threshold, for terminal deployments;
	// default 1h.
	Deployment time.Duration
}

// DefaultThresholds returns Nomad's defaults.
func DefaultThresholds() Thresholds {
	return Thresholds{Eval: time.Hour, BatchEval: 24 * time.Hour, Job: 4 * time.Hour,
		Node: 24 * time.Hour, Deployment: time.Hour}
}

// Validate reports a negative threshold, naming it.
func (t Thresholds) Validate() error {
	for _, f := range []struct {
		name string
		d    time.Duration
	}{{"eval_gc_threshold", t.Eval}, {"batch_eval_gc_threshold", t.BatchEval}, {"job_gc_threshold", t.Job},
		{"node_gc_threshold", t.Node}, {"deployment_gc_threshold", t.Deployment}} {
		if f.d < 0 {
			return commands.Invalid(f.name, "must not be negative, is %s", f.d)
		}
	}
	return nil
}

// DefaultLimit is the most objects one collection removes: one entry
// stays short, and the processor runs again while there is more.
const DefaultLimit = 1000

// Collect is one garbage collection. Force ignores the thresholds (what
// PUT /v1/system/gc does, as in Nomad).
type Collect struct {
	Thresholds Thresholds
	Force      bool
	// Limit is the most objects removed; 0 is DefaultLimit.
	Limit int
	// Report, when set, receives what Decide removes, by kind.
	Report *Counts `json:"-"`
}

var _ commands.Command = Collect{}

// Validate implements commands.Command.
func (c Collect) Validate() error {
	if c.Limit < 0 {
		return commands.Invalid("Limit", "must not be negative")
	}
	return c.Thresholds.Validate()
}

// Counts says how many objects of each kind a decision removes.
type Counts struct {
	Evals, Allocs, Jobs, Nodes, Deployments int
}

// Total is the number of objects.
func (c Counts) Total() int { return c.Evals + c.Allocs + c.Jobs + c.Nodes + c.Deployments }

// Decide implements commands.Command.
func (c Collect) Decide(v projections.View, now time.Time, _ commands.IDs) (commands.Decision, error) {
	d, counts, err := c.Plan(v, now)
	if c.Report != nil {
		*c.Report = counts
	}
	return d, err
}

// Plan is Decide that also says what is removed, by kind.
func (c Collect) Plan(v projections.View, now time.Time) (commands.Decision, Counts, error) {
	g := &gatherer{c: c, v: v, now: now.UnixNano(), limit: c.Limit, jobs: map[string]*jobs.Job{}, pre: map[string]bool{}}
	if g.limit == 0 {
		g.limit = DefaultLimit
	}
	if c.Force {
		g.c.Thresholds = Thresholds{}
	}
	for _, step := range []func() error{g.refs, g.deadJobs, g.evals, g.deployments, g.nodes} {
		if g.full() {
			break
		}
		if err := step(); err != nil {
			return commands.Decision{}, Counts{}, fmt.Errorf("gc: %w", err)
		}
	}
	d, err := g.decision()
	return d, g.counts, err
}

// gatherer accumulates one decision.
type gatherer struct {
	c     Collect
	v     projections.View
	now   int64
	limit int

	// referenced are ids a non-terminal alloc refers to: evals (EvalID,
	// FollowupEvalID), allocs (PreviousAllocation), deployments.
	refEvals, refAllocs, refDeps map[string]bool
	jobs                         map[string]*jobs.Job

	evalIDs, allocIDs, depIDs []string
	purges                    []*events.JobDeregistered
	nodeIDs                   []string
	pre                       map[string]bool
	pres                      []events.Precondition
	counts                    Counts
}

func (g *gatherer) full() bool { return g.counts.Total() >= g.limit }

func (g *gatherer) old(t int64, threshold time.Duration) bool {
	return g.now-t >= int64(threshold)
}

// require carries a removed row's modify index as a precondition.
func (g *gatherer) require(table, key string, index uint64) {
	k := table + "\x00" + key
	if g.pre[k] {
		return
	}
	g.pre[k] = true
	g.pres = append(g.pres, events.Precondition{Table: table, Key: key, Op: events.ModifyIndex, Index: index})
}

// refs records what the non-terminal allocations refer to.
func (g *gatherer) refs() error {
	g.refEvals, g.refAllocs, g.refDeps = map[string]bool{}, map[string]bool{}, map[string]bool{}
	return allocs.Scan(g.v, allocs.Query{Namespace: "*"}, func(a *allocs.Alloc) error {
		if a.Terminal() {
			return nil
		}
		g.refEvals[a.EvalID] = true
		if a.FollowupEvalID != "" {
			g.refEvals[a.FollowupEvalID] = true
		}
		if a.PreviousAllocation != "" {
			g.refAllocs[a.PreviousAllocation] = true
		}
		if a.DeploymentID != "" {
			g.refDeps[a.DeploymentID] = true
		}
		return nil
	})
}

// job returns the job of an eval or alloc, nil when it is gone.
func (g *gatherer) job(ns, id string) (*jobs.Job, error) {
	k := jobs.Key(ns, id)
	if j, ok := g.jobs[k]; ok {
		return j, nil
	}
	j, err := jobs.Get(g.v, ns, id)
	if errors.Is(err, projections.ErrNotFound) {
		j, err = nil, nil
	}
	if err != nil {
		return nil, err
	}
	g.jobs[k] = j
	return j, nil
}

func jobDead(j *jobs.Job) bool { return j == nil || j.Status == jobs.StatusDead }

// evalCollectable says whether a terminal eval of a job that stays may go,
// with its allocs, and returns those allocs.
func (g *gatherer) evalCollectable(e *events.Evaluation, j *jobs.Job) (bool, []*allocs.Alloc, error) {
	if !e.Terminal() || g.refEvals[e.ID] {
		return false, nil, nil
	}
	threshold := g.c.Thresholds.Eval
	if e.Type == events.JobTypeBatch {
		threshold = g.c.Thresholds.BatchEval
		// A live batch job's complete allocs say what already ran: keep them.
		if !jobDead(j) && !j.Stop {
			return false, nil, nil
		}
	}
	if !g.old(e.ModifyTime, threshold) {
		return false, nil, nil
	}
	list, err := allocs.ByEval(g.v, e.ID)
	if err != nil {
		return false, nil, err
	}
	for _, a := range list {
		if !a.Terminal() || g.refAllocs[a.ID] || !g.old(a.ModifyTime, threshold) {
			return false, nil, nil
		}
	}
	return true, list, nil
}

func (g *gatherer) takeEval(e *evals.Eval, list []*allocs.Alloc) {
	g.evalIDs = append(g.evalIDs, e.ID)
	g.require(evals.Table, e.ID, e.ModifyIndex)
	g.counts.Evals++
	for _, a := range list {
		g.allocIDs = append(g.allocIDs, a.ID)
		g.require(allocs.Table, a.ID, a.ModifyIndex)
		g.counts.Allocs++
	}
}

// evals collects old terminal evals (and their allocs) of jobs that stay.
func (g *gatherer) evals() error {
	taken := map[string]bool{}
	for _, id := range g.evalIDs {
		taken[id] = true
	}
	return stopAt(evals.Scan(g.v, evals.Query{Namespace: "*"}, func(e *evals.Eval) error {
		if g.full() {
			return errFull
		}
		if taken[e.ID] {
			return nil
		}
		j, err := g.job(e.Namespace, e.JobID)
		if err != nil {
			return err
		}
		ok, list, err := g.evalCollectable(&e.Evaluation, j)
		if err != nil || !ok {
			return err
		}
		g.takeEval(e, list)
		return nil
	}))
}

// deadJobs purges dead jobs whose evals and allocs are all finished and
// old, with them.
func (g *gatherer) deadJobs() error {
	return stopAt(jobs.Scan(g.v, jobs.Query{Namespace: jobs.AllNamespaces}, func(s *jobs.Stub) error {
		if g.full() {
			return errFull
		}
		if s.Status != jobs.StatusDead {
			return nil
		}
		j, err := g.job(s.Namespace, s.ID)
		if err != nil || j == nil {
			return err
		}
		if (jobs.Periodic(&j.Job) || jobs.Parameterized(&j.Job)) && !j.Stop {
			return nil // a live parent: its children come from it
		}
		if !g.old(j.SubmitTime, g.c.Thresholds.Job) {
			return nil
		}
		es, err := evals.ByJob(g.v, j.Namespace, j.ID)
		if err != nil {
			return err
		}
		type take struct {
			e    *evals.Eval
			list []*allocs.Alloc
		}
		var takes []take
		for _, e := range es {
			if !e.Terminal() || g.refEvals[e.ID] || !g.old(e.ModifyTime, g.c.Thresholds.Job) {
				return nil
			}
			list, err := allocs.ByEval(g.v, e.ID)
			if err != nil {
				return err
			}
			for _, a := range list {
				if !a.Terminal() || g.refAllocs[a.ID] || !g.old(a.ModifyTime, g.c.Thresholds.Job) {
					return nil
				}
			}
			takes = append(takes, take{e, list})
		}
		byJob, err := allocs.ByJob(g.v, j.Namespace, j.ID)
		if err != nil {
			return err
		}
		for _, a := range byJob {
			if !a.Terminal() || g.refAllocs[a.ID] {
				return nil
			}
		}
		for _, t := range takes {
			g.takeEval(t.e, t.list)
		}
		seen := map[string]bool{}
		for _, id := range g.allocIDs {
			seen[id] = true
		}
		for _, a := range byJob { // allocs whose eval is already gone
			if !seen[a.ID] {
				g.allocIDs = append(g.allocIDs, a.ID)
				g.require(allocs.Table, a.ID, a.ModifyIndex)
				g.counts.Allocs++
			}
		}
		deps, err := deployments.ByJob(g.v, j.Namespace, j.ID)
		if err != nil {
			return err
		}
		for _, d := range deps {
			if d.Active() || g.refDeps[d.ID] {
				return nil
			}
		}
		for _, d := range deps {
			g.takeDeployment(d)
		}
		sumRow, err := g.v.Get(jobs.SummaryTable, jobs.Key(j.Namespace, j.ID))
		if err == nil {
			g.require(jobs.SummaryTable, jobs.Key(j.Namespace, j.ID), sumRow.ModifyIndex)
		} else if !errors.Is(err, projections.ErrNotFound) {
			return err
		}
		g.require(jobs.Table, jobs.Key(j.Namespace, j.ID), j.ModifyIndex)
		g.purges = append(g.purges, &events.JobDeregistered{Namespace: j.Namespace, ID: j.ID, Purge: true})
		g.counts.Jobs++
		return nil
	}))
}

func (g *gatherer) takeDeployment(d *deployments.Deployment) {
	g.depIDs = append(g.depIDs, d.ID)
	g.require(deployments.Table, d.ID, d.ModifyIndex)
	g.counts.Deployments++
}

// deployments collects old terminal deployments that no live alloc
// belongs to and that are not the latest of a job that is not dead.
func (g *gatherer) deployments() error {
	taken := map[string]bool{}
	for _, id := range g.depIDs {
		taken[id] = true
	}
	return stopAt(deployments.Scan(g.v, deployments.Query{Namespace: "*"}, func(d *deployments.Deployment) error {
		if g.full() {
			return errFull
		}
		if taken[d.ID] || d.Active() || g.refDeps[d.ID] || !g.old(d.ModifyTime, g.c.Thresholds.Deployment) {
			return nil
		}
		j, err := g.job(d.Namespace, d.JobID)
		if err != nil {
			return err
		}
		if !jobDead(j) {
			latest, err := deployments.Latest(g.v, d.Namespace, d.JobID)
			if err != nil && !errors.Is(err, projections.ErrNotFound) {
				return err
			}
			if latest != nil && latest.ID == d.ID {
				return nil // the scheduler reads a live job's latest deployment
			}
		}
		g.takeDeployment(d)
		return nil
	}))
}

// nodes collects nodes down for longer than the threshold with no
// non-terminal allocation.
func (g *gatherer) nodes() error {
	list, err := nodes.List(g.v, "")
	if err != nil {
		return err
	}
	for _, n := range list {
		if g.full() {
			return nil
		}
		if n.Status != events.NodeStatusDown || !g.old(n.StatusUpdatedAt, g.c.Thresholds.Node) {
			continue
		}
		on, err := allocs.ByNode(g.v, n.ID)
		if err != nil {
			return err
		}
		busy := false
		for _, a := range on {
			if !a.Terminal() {
				busy = true
				break
			}
		}
		if busy {
			continue
		}
		g.require(nodes.Table, n.ID, n.ModifyIndex)
		// A placement on the node moves its alloc change index: refused.
		changed, err := allocs.NodeChangeIndex(g.v, n.ID)
		if err != nil {
			return err
		}
		g.require(allocs.NodeChangesTable, n.ID, changed)
		g.nodeIDs = append(g.nodeIDs, n.ID)
		g.counts.Nodes++
	}
	return nil
}

var errFull = errors.New("gc: limit reached")

func stopAt(err error) error {
	if errors.Is(err, errFull) {
		return nil
	}
	return err
}

// decision turns what was gathered into events: evals, allocs,
// deployments, then job purges and nodes.
func (g *gatherer) decision() (commands.Decision, error) {
	var d commands.Decision
	if len(g.evalIDs) > 0 {
		d.Events = append(d.Events, &events.EvalsDeleted{IDs: g.evalIDs})
	}
	if len(g.allocIDs) > 0 {
		d.Events = append(d.Events, &events.AllocsDeleted{IDs: g.allocIDs})
		// Their service instances go with them, in the same entry.
		dereg, err := services.ForAllocs(g.v, services.ReasonAllocDeleted, g.allocIDs...)
		if err != nil {
			return d, err
		}
		if dereg != nil {
			d.Events = append(d.Events, dereg)
		}
	}
	if len(g.depIDs) > 0 {
		d.Events = append(d.Events, &events.DeploymentsDeleted{IDs: g.depIDs})
	}
	for _, p := range g.purges {
		d.Events = append(d.Events, p)
	}
	for _, id := range g.nodeIDs {
		d.Events = append(d.Events, &events.NodeDeregistered{ID: id})
	}
	d.Preconditions = g.pres
	return d, nil
}
