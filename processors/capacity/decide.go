package capacity

import (
	"cmp"
	"slices"
	"time"

	"github.com/ordoplane/ordo/events"
)

// Demand is what a pool's blocked evals need.
type Demand struct {
	// Placements counts the allocations they failed to place for lack of
	// capacity in the pool.
	Placements int
	// Evals are the blocked evals counted, for logs.
	Evals []string
	// SeenIndex is the oldest state a counted eval was computed on: a
	// node registered after it has not been tried by that eval yet.
	SeenIndex uint64
	// Settling reports an eval of a job of the pool pending: about to be
	// scheduled, so what is needed is about to change.
	Settling bool
}

// Request is one of the pool's node requests, as Decide sees it.
type Request struct {
	ID          string
	State       string
	CreateIndex uint64
}

// Node is the node an instance registered, as Decide sees it.
type Node struct {
	ID string
	// ChangeIndex is the index of the node's last change (registration,
	// status, eligibility, drain): a blocked eval computed before it has
	// not tried the node as it is now.
	ChangeIndex uint64
	// Allocs counts its non-terminal allocations.
	Allocs int
	// Usable: ready or initializing (registered, first heartbeat to
	// come), eligible and not draining.
	Usable bool
	// Draining: draining or ineligible already.
	Draining bool
	// Initializing: registered, its first heartbeat to come; no eval can
	// have placed on it yet.
	Initializing bool
}

// Instance is a live instance launched for the pool (building or in use
// for one of its requests, or left after its request went away).
type Instance struct {
	ID string
	// RequestID is the pool's request it serves, "" when released.
	RequestID string
	// Node is its registered node, nil until it registers.
	Node *Node
}

// Input is everything Decide reads for one pool.
type Input struct {
	Pool      Pool
	Now       time.Time
	Demand    Demand
	Requests  []Request
	Instances []Instance
	// IdleSince maps an instance to when it was first seen idle (no node
	// yet, or a node without allocations); Decide returns the next map.
	IdleSince map[string]time.Time
	// BackoffUntil: no request is filed before it (a request failed).
	BackoffUntil time.Time
	// Backoff is how long a failed request stops new ones.
	Backoff time.Duration
}

// Return is an idle instance to give back: drain its node (when it has
// one not draining yet), then delete its request, or the instance itself
// when it has none.
type Return struct {
	InstanceID string
	NodeID     string
	RequestID  string
	Drain      bool
	Idle       time.Duration
}

// Decision is what to do for one pool.
type Decision struct {
	// Create is how many requests to file (one label each).
	Create int
	// Release are open requests no longer needed, newest first.
	Release []string
	// Cleanup are failed requests to delete.
	Cleanup []string
	// Return are idle instances to give back.
	Return []Return
	// IdleSince is the next idle map.
	IdleSince map[string]time.Time
	// BackoffUntil is the next backoff deadline.
	BackoffUntil time.Time
	// Wake is when an idle timer or the backoff ends; 0 for none.
	Wake time.Duration
	// Open counts open requests; Supply the instances open requests,
	// instances still coming and empty nodes not yet tried will bring.
	Open, Supply int
}

// Decide decides for one pool: file requests for the placements nothing
// on the way will serve (bounded by MaxRequests), release open requests
// beyond the need, delete failed ones, and return instances idle for the
// pool's IdleTimeout. It is a pure function of in.
//
// Supply is what is on the way: an open request without an instance
// yet, an instance whose node has not registered, and an empty usable
// node the blocked evals have not tried as it is now (initializing, or
// changed after they were computed). Only open requests without an
// instance yet are released: an instance already launching is capacity
// on its way, and an idle one is returned after IdleTimeout.
func Decide(in Input) Decision {
	d := Decision{IdleSince: map[string]time.Time{}, BackoffUntil: in.BackoffUntil}
	state := map[string]string{}
	live := 0
	for _, r := range in.Requests {
		state[r.ID] = r.State
		switch r.State {
		case events.RequestRequested, events.RequestPending:
			d.Open++
			live++
		case events.RequestFulfilled:
			live++
		case events.RequestFailed:
			d.Cleanup = append(d.Cleanup, r.ID)
		}
	}
	wake := func(after time.Duration) {
		if after > 0 && (d.Wake == 0 || after < d.Wake) {
			d.Wake = after
		}
	}
	launched := map[string]bool{} // open requests with an instance
	for _, inst := range in.Instances {
		n := inst.Node
		s := state[inst.RequestID]
		if open := s == events.RequestRequested || s == events.RequestPending; open {
			launched[inst.RequestID] = true
		} else if n == nil || n.Allocs == 0 {
			// Fulfilled, or released: its idle time counts.
			since, ok := in.IdleSince[inst.ID]
			if !ok {
				since = in.Now
			}
			idle := in.Now.Sub(since)
			if idle >= in.Pool.IdleTimeout {
				r := Return{InstanceID: inst.ID, RequestID: inst.RequestID, Idle: idle}
				if n != nil {
					r.NodeID, r.Drain = n.ID, !n.Draining
				}
				d.Return = append(d.Return, r)
				d.IdleSince[inst.ID] = since // kept: a return refused by a conflict is tried again
				continue                     // given back: no longer supply
			}
			d.IdleSince[inst.ID] = since
			wake(in.Pool.IdleTimeout - idle)
		}
		if n == nil || (n.Allocs == 0 && n.Usable && (n.Initializing || n.ChangeIndex > in.Demand.SeenIndex)) {
			d.Supply++ // still coming, or not tried by the blocked evals yet
		}
	}
	var releasable []Request
	for _, r := range in.Requests {
		if r.State != events.RequestRequested && r.State != events.RequestPending {
			continue
		}
		if !launched[r.ID] {
			d.Supply++ // no instance yet: the one thing a release saves
			releasable = append(releasable, r)
		}
	}
	if len(d.Cleanup) > 0 {
		d.BackoffUntil = in.Now.Add(in.Backoff)
	}
	need := in.Demand.Placements
	if need > d.Supply && in.Now.Before(d.BackoffUntil) {
		wake(d.BackoffUntil.Sub(in.Now))
	} else if need > d.Supply {
		d.Create = max(0, min(need-d.Supply, in.Pool.MaxRequests-live))
	}
	if !in.Demand.Settling && d.Supply > need && len(releasable) > 0 {
		slices.SortFunc(releasable, func(a, b Request) int { return cmp.Compare(b.CreateIndex, a.CreateIndex) })
		for _, r := range releasable[:min(len(releasable), d.Supply-need)] {
			d.Release = append(d.Release, r.ID)
		}
	}
	return d
}

// CapacityFailure reports whether a placement failure m is one more
// nodes of the pool could fix: nodes were exhausted, no node of the pool
// could be tried at all, or distinct_hosts wanted another host.
func CapacityFailure(m *events.AllocMetric) bool {
	if m == nil {
		return false
	}
	return m.NodesExhausted > 0 || m.NodesEvaluated == 0 || m.ConstraintFiltered[events.ConstraintDistinctHosts] > 0
}
