package rerun

import (
	"errors"
	"fmt"
	"os"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/processors/scheduler"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/allocs"
	"github.com/ordoplane/ordo/projections/nodes"
	"github.com/ordoplane/ordo/storage/kv"
)

// Result is a re-run next to what the log recorded, with their diff: what
// GET /v1/debug/reschedule/{eval_id} answers and `ordo debug reschedule`
// prints.
type Result struct {
	EvalID string
	// Eval is the eval as the worker scheduled it (the version the log held
	// at the snapshot index, pending).
	Eval events.Evaluation
	// SnapshotIndex is the index of the state the decision was made on.
	SnapshotIndex uint64
	// Recorded is the plan the log committed (Record.Plan), Recomputed the
	// plan the scheduler computes again on the same state.
	Recorded, Recomputed *scheduler.Plan
	// Diff lists the divergences (Report.Changes); empty when Equal.
	Diff  []Change
	Equal bool
	// EarlierAttempts are the commits of attempts the plan applier refused
	// in part before the final one (Record.Earlier); they are no
	// divergence and cannot be re-run.
	EarlierAttempts []Commit
	// Trigger is what the entry that created the eval changed with it
	// (Record.Trigger: the drainer's migrate marks, an operator's stop);
	// nil when it only created the eval. TriggerLines describes it.
	Trigger *Commit
	// Allocs describes, as they stood at the snapshot index, the
	// allocations either plan stops or updates (which the plans name by id
	// only), by id.
	Allocs map[string]AllocRef
	// Nodes names the nodes either plan touches, by id.
	Nodes map[string]string
	// Scores are, for each placement the re-run made or tried, every node
	// it scored with each scorer's value and the node chosen
	// (scheduler.WithScores). Recorded plans carry none.
	Scores []scheduler.PlacementScores
}

// AllocRef is what a reader needs to know of an allocation a plan stops or
// updates.
type AllocRef struct {
	Name, JobID, TaskGroup, NodeID string
	DesiredStatus, ClientStatus    string
}

// Explain re-runs eval evalID's decision on the state the archive in src
// held at its snapshot index (a scratch store under dir, removed before it
// returns) and returns the recorded and recomputed plans with their diff.
// It writes nothing to src. Errors wrap ErrNoEval and ErrNotDecided as
// Rerun's do.
func Explain(src kv.Reader, evalID, dir string) (*Result, error) {
	rec, err := Recorded(src, evalID)
	if err != nil {
		return nil, err
	}
	res := &Result{EvalID: evalID, Eval: rec.Eval, SnapshotIndex: rec.SnapshotIndex,
		EarlierAttempts: rec.Earlier, Trigger: rec.Trigger, Allocs: map[string]AllocRef{}, Nodes: map[string]string{}}
	plan, err := recomputeWith(src, rec, dir, func(v projections.View, plan *scheduler.Plan) error {
		if err := res.describe(v, rec.Plan()); err != nil {
			return err
		}
		return res.describe(v, plan)
	})
	if err != nil {
		return nil, err
	}
	res.Recorded, res.Recomputed = rec.Plan(), plan
	res.Scores = plan.Scores
	if res.Scores == nil {
		res.Scores = []scheduler.PlacementScores{}
	}
	d := Diff(rec, plan)
	res.Diff, res.Equal = d.Changes, d.Empty()
	if res.Diff == nil {
		res.Diff = []Change{}
	}
	if res.EarlierAttempts == nil {
		res.EarlierAttempts = []Commit{}
	}
	return res, nil
}

// describe records, from v, the allocations p stops or updates and the
// names of the nodes it touches.
func (r *Result) describe(v projections.View, p *scheduler.Plan) error {
	if p == nil {
		return nil
	}
	for _, u := range append(append([]events.AllocDesiredUpdate(nil), p.Stops...), p.Updates...) {
		a, err := allocs.Get(v, u.ID)
		if errors.Is(err, projections.ErrNotFound) {
			continue
		} else if err != nil {
			return err
		}
		r.Allocs[u.ID] = AllocRef{Name: a.Name, JobID: a.JobID, TaskGroup: a.TaskGroup, NodeID: a.NodeID,
			DesiredStatus: a.DesiredStatus, ClientStatus: a.ClientStatus}
		r.nodeName(v, a.NodeID)
	}
	for _, a := range p.Placements {
		r.nodeName(v, a.NodeID)
	}
	return nil
}

func (r *Result) nodeName(v projections.View, id string) {
	if _, ok := r.Nodes[id]; ok || id == "" {
		return
	}
	if n, err := nodes.Get(v, id); err == nil {
		r.Nodes[id] = n.Name
	}
}

// API is Explain for the HTTP API (commands/httpapi.Rescheduler). Build
// it with ForAPI.
type API struct {
	dir string
	sem chan struct{}
}

// ForAPI returns the HTTP API's rescheduler: scratch stores go under dir,
// at most concurrent re-runs run at once (each rebuilds the archive's
// prefix; others wait; dir is created if missing), an eval the archive
// never recorded answers 404 and one no worker completed 409.
func ForAPI(dir string, concurrent int) *API {
	return &API{dir: dir, sem: make(chan struct{}, max(concurrent, 1))}
}

// Reschedule re-runs the recorded decision of eval evalID on the archive
// in src and returns its Result.
func (a *API) Reschedule(src kv.Reader, evalID string) (any, error) {
	a.sem <- struct{}{}
	defer func() { <-a.sem }()
	if err := os.MkdirAll(a.dir, 0o755); err != nil {
		return nil, err
	}
	res, err := Explain(src, evalID, a.dir)
	switch {
	case errors.Is(err, ErrNoEval):
		return nil, &commands.NotFoundError{Kind: "evaluation", ID: evalID}
	case errors.Is(err, ErrNotDecided):
		return nil, &commands.ConflictError{Reason: fmt.Sprintf(
			"evaluation %s has no completed scheduling decision to re-run (never completed by a worker: still pending or blocked, failed, or refused by the plan applier)", evalID)}
	case err != nil:
		return nil, err
	}
	return res, nil
}
