package schedulertest

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/processors/plan"
	"github.com/ordoplane/ordo/processors/scheduler"
)

// Epoch is the harness clock's start, in Unix nanoseconds.
const Epoch = int64(1_700_000_000) * int64(time.Second)

// Harness plays the planner around the scheduler.
type Harness struct {
	State *scheduler.MemState
	// Now is the leader time, Unix nanoseconds.
	Now int64
	// Reject names nodes whose part of every plan the planner rejects.
	Reject map[string]bool
	// Evals are the evals created: by NewEval, and the follow-ups and
	// blocked evals plans asked for.
	Evals []*events.Evaluation
	evals int
}

// New returns a harness at Epoch and index 1 with an empty state.
func New() *Harness {
	h := &Harness{State: scheduler.NewMemState(), Now: Epoch, Reject: map[string]bool{}}
	h.State.SetIndex(1)
	return h
}

// Advance moves the clock.
func (h *Harness) Advance(d time.Duration) { h.Now += int64(d) }

// Bump advances the state's index, as a committed entry would.
func (h *Harness) Bump() { h.State.SetIndex(h.State.Index() + 1) }

// NewEval returns a pending eval for the job created now, with the next
// harness id (eval-1, eval-2, …).
func (h *Harness) NewEval(ns, jobID, trigger string) *events.Evaluation {
	h.evals++
	e := &events.Evaluation{ID: fmt.Sprintf("eval-%d", h.evals), Namespace: ns, JobID: jobID, TriggeredBy: trigger,
		Status: events.EvalStatusPending, Priority: 50, Type: events.JobTypeService, CreateTime: h.Now, ModifyTime: h.Now}
	if j, ok := h.State.Job(ns, jobID); ok {
		e.Type, e.Priority = j.Type, j.Priority
	}
	h.Evals = append(h.Evals, e)
	return e
}

// Process computes eval's plan, evaluates it as the plan applier would
// (rejecting the nodes in Reject too), and commits the result.
func (h *Harness) Process(eval *events.Evaluation) (*scheduler.Plan, plan.Result, error) {
	p, err := scheduler.Compute(h.State, eval)
	if err != nil {
		return nil, plan.Result{}, err
	}
	res := plan.Evaluate(p, h.State)
	if len(h.Reject) > 0 {
		res = h.reject(p, res)
	}
	h.Commit(p, &res)
	return p, res, nil
}

// reject drops the parts of res on the nodes in Reject.
func (h *Harness) reject(plan *scheduler.Plan, res plan.Result) plan.Result {
	nodeOf := map[string]string{}
	for _, a := range h.State.AllocsByJob(plan.Namespace, plan.JobID) {
		nodeOf[a.ID] = a.NodeID
	}
	drop := map[string]bool{}
	var placements []events.Allocation
	for _, a := range res.Placements {
		if h.Reject[a.NodeID] {
			drop[a.NodeID] = true
			continue
		}
		placements = append(placements, a)
	}
	res.Placements = placements
	keep := func(us []events.AllocDesiredUpdate) []events.AllocDesiredUpdate {
		var out []events.AllocDesiredUpdate
		for _, u := range us {
			if !drop[nodeOf[u.ID]] {
				out = append(out, u)
			}
		}
		return out
	}
	res.Stops, res.Updates = keep(res.Stops), keep(res.Updates)
	for id := range drop {
		if !slices.Contains(res.RejectedNodes, id) {
			res.RejectedNodes = append(res.RejectedNodes, id)
			if res.Reasons == nil {
				res.Reasons = map[string]string{}
			}
			res.Reasons[id] = "rejected by the harness"
		}
	}
	slices.Sort(res.RejectedNodes)
	if len(res.RejectedNodes) > 0 {
		res.RefreshIndex = h.State.Index()
	}
	return res
}

// Commit applies a result to the state as one entry, as the projections
// would: placements are created (linking their previous allocation),
// stops and updates change allocations, the deployment is stored and
// follow-ups and a blocked eval are recorded.
func (h *Harness) Commit(plan *scheduler.Plan, res *plan.Result) {
	h.Bump()
	for _, p := range res.Placements {
		a := p
		a.CreateTime, a.ModifyTime = h.Now, h.Now
		h.State.UpsertAlloc(&a)
		if prev, ok := h.State.Alloc(a.PreviousAllocation); ok {
			c := *prev
			c.NextAllocation, c.ModifyTime = a.ID, h.Now
			h.State.UpsertAlloc(&c)
		}
	}
	for _, us := range [][]events.AllocDesiredUpdate{res.Stops, res.Updates} {
		for _, u := range us {
			prev, ok := h.State.Alloc(u.ID)
			if !ok {
				continue
			}
			c := *prev
			if u.DesiredStatus != "" {
				c.DesiredStatus = u.DesiredStatus
			}
			if u.DesiredDescription != "" {
				c.DesiredDescription = u.DesiredDescription
			}
			if u.ClientStatus != "" {
				c.ClientStatus = u.ClientStatus
			}
			if u.FollowupEvalID != "" {
				c.FollowupEvalID = u.FollowupEvalID
			}
			c.ModifyTime = h.Now
			h.State.UpsertAlloc(&c)
		}
	}
	if d := res.Deployment; d != nil {
		c := *d
		c.CreateTime, c.ModifyTime = h.Now, h.Now
		h.State.UpsertDeployment(&c)
	}
	for _, f := range res.FollowUps {
		e := f
		e.CreateTime, e.ModifyTime = h.Now, h.Now
		h.Evals = append(h.Evals, &e)
	}
	if plan.CreateBlockedEval {
		h.evals++
		h.Evals = append(h.Evals, &events.Evaluation{ID: fmt.Sprintf("eval-%d", h.evals), Namespace: plan.Namespace,
			JobID: plan.JobID, Status: events.EvalStatusBlocked, TriggeredBy: events.EvalTriggerQueuedAllocs,
			PreviousEval: plan.EvalID, ClassEligibility: plan.ClassEligibility,
			EscapedComputedClass: plan.EscapedComputedClass, CreateTime: h.Now, ModifyTime: h.Now})
	}
}

// Eval returns the harness eval with id.
func (h *Harness) Eval(id string) (*events.Evaluation, bool) {
	for _, e := range h.Evals {
		if e.ID == id {
			return e, true
		}
	}
	return nil, false
}

// Planned returns a harness holding ready nodes named ids and the service
// job "web" of count allocations, and the plan of its registration,
// computed but not committed.
func Planned(tb testing.TB, count int, ids ...string) (*Harness, *scheduler.Plan) {
	tb.Helper()
	h := New()
	for _, id := range ids {
		h.State.UpsertNode(Node(id))
	}
	h.State.UpsertJob(Job("web", events.JobTypeService, count))
	h.Bump()
	plan, err := scheduler.Compute(h.State, h.NewEval("default", "web", events.EvalTriggerJobRegister))
	if err != nil {
		tb.Fatal(err)
	}
	return h, plan
}
