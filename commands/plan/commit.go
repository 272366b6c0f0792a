package plan

import (
	"errors"
	"sort"
	"time"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/services"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/csi"
	"github.com/ordoplane/ordo/projections/evals"
	"github.com/ordoplane/ordo/projections/keyring"
	"github.com/ordoplane/ordo/projections/nodes"
)

// Commit is what the plan applier commits for one evaluation.
type Commit struct {
	// EvalID is the evaluation the plan answers.
	EvalID string
	// Placements are new allocations.
	Placements []events.Allocation
	// Updates change what the servers want of existing allocations.
	Updates []events.AllocDesiredUpdate
	// Deployment is created or replaced, when set.
	Deployment *events.Deployment
	// Evals are the evaluation's own update (status, queued counts, the
	// snapshot index) and any blocked or follow-up evals it created.
	Evals []events.Evaluation
	// NodeIndexes maps each node receiving placements to the modify index
	// the applier verified it at.
	NodeIndexes map[string]uint64
}

var _ commands.Command = Commit{}

// Validate implements commands.Command.
func (c Commit) Validate() error {
	if c.EvalID == "" {
		return commands.Invalid("EvalID", "required")
	}
	for i, a := range c.Placements {
		if a.ID == "" || a.NodeID == "" {
			return commands.Invalid("Placements", "allocation %d lacks an id or a node", i)
		}
		if _, ok := c.NodeIndexes[a.NodeID]; !ok {
			return commands.Invalid("NodeIndexes", "node %s of allocation %s was not verified", a.NodeID, a.ID)
		}
	}
	return nil
}

// Decide implements commands.Command.
func (c Commit) Decide(v projections.View, now time.Time, _ commands.IDs) (commands.Decision, error) {
	var d commands.Decision
	placements, err := signWith(v, stamp(c.Placements, now))
	if err != nil {
		return d, err
	}
	// The eval must still exist: one deleted while a worker planned it (eval
	// delete or GC, which do not pause the broker) refuses the plan, which
	// then places nothing and does not write the eval back.
	d.Preconditions = append(d.Preconditions, events.Precondition{Table: evals.Table, Key: c.EvalID, Op: events.Exists})
	nodeIDs := make([]string, 0, len(c.NodeIndexes))
	for id := range c.NodeIndexes {
		nodeIDs = append(nodeIDs, id)
	}
	sort.Strings(nodeIDs)
	for _, id := range nodeIDs {
		d.Preconditions = append(d.Preconditions, events.Precondition{
			Table: nodes.Table, Key: id, Op: events.ModifyIndex, Index: c.NodeIndexes[id]})
	}
	if len(placements) > 0 && v.Reader() != nil {
		// CSI claims: refused as a conflict (the worker re-plans) when a
		// plan committed since the scheduler's snapshot took them; held
		// to the volumes as read here against one committing meanwhile.
		pre, err := csi.PlanClaims(v, placements)
		if errors.Is(err, csi.ErrClaimsTaken) {
			return d, &commands.ConflictError{Precondition: events.Precondition{Table: csi.VolumesTable}, Reason: err.Error()}
		} else if err != nil {
			return d, err
		}
		d.Preconditions = append(d.Preconditions, pre...)
	}
	if len(placements) > 0 {
		d.Events = append(d.Events, &events.AllocsPlaced{EvalID: c.EvalID, Allocs: placements})
		if key := placements[0].SigningKeyID; key != "" {
			// The key cannot be collected before the placements apply (N5).
			d.Preconditions = append(d.Preconditions, events.Precondition{Table: keyring.Table, Key: key, Op: events.Exists})
		}
	}
	if len(c.Updates) > 0 {
		d.Events = append(d.Events, &events.AllocsDesiredUpdated{EvalID: c.EvalID, Updates: c.Updates})
		if err := deregisterLost(&d, v, c.Updates); err != nil {
			return d, err
		}
	}
	if c.Deployment != nil {
		d.Events = append(d.Events, &events.DeploymentUpserted{Deployment: *c.Deployment})
	}
	if len(c.Evals) > 0 {
		d.Events = append(d.Events, &events.EvalsUpserted{Evals: c.Evals})
	}
	return d, nil
}

// deregisterLost appends, in the plan's entry, the deregistration of the
// service instances of the allocations the plan marks lost.
func deregisterLost(d *commands.Decision, v projections.View, updates []events.AllocDesiredUpdate) error {
	if v.Reader() == nil { // no state: nothing registered
		return nil
	}
	var lost []string
	for _, u := range updates {
		if u.ClientStatus == events.AllocClientLost {
			lost = append(lost, u.ID)
		}
	}
	dereg, err := services.ForAllocs(v, services.ReasonAllocTerminal, lost...)
	if dereg != nil {
		d.Events = append(d.Events, dereg)
	}
	return err
}

// signWith returns the placements recording the active root key as the
// key that signs their workload identity (N5); unchanged before the
// cluster has a key.
func signWith(v projections.View, placements []events.Allocation) ([]events.Allocation, error) {
	if len(placements) == 0 || v.Reader() == nil { // no state: nothing to sign with
		return placements, nil
	}
	act, err := keyring.Active(v)
	if errors.Is(err, keyring.ErrNoActiveKey) {
		return placements, nil
	} else if err != nil {
		return nil, err
	}
	out := make([]events.Allocation, len(placements))
	for i, a := range placements {
		a.SigningKeyID = act.KeyID
		out[i] = a
	}
	return out, nil
}
