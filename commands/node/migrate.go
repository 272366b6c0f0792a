package node

import (
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/allocs"
	"github.com/ordoplane/ordo/projections/jobs"
	"github.com/ordoplane/ordo/projections/nodes"
)

// MaxMigrateAllocs bounds how many allocations one MarkMigrate marks.
const MaxMigrateAllocs = 10000

// The priority and type of the eval of a job MarkMigrate cannot read:
// Nomad's defaults for a service job.
const (
	defaultEvalPriority = 50
	defaultEvalType     = events.JobTypeService
)

// MarkMigrate marks allocations on draining nodes to migrate
// (DesiredTransition.Migrate) and creates one eval per job, in the same
// entry, so the scheduler places their replacements elsewhere and stops
// them. The node drainer (processors/drainer) submits it with the few
// allocations each job's migrate block lets go at a time.
type MarkMigrate struct {
	// AllocIDs are the allocations to mark; 1 to MaxMigrateAllocs.
	AllocIDs []string
}

var _ commands.Command = MarkMigrate{}

// Validate implements commands.Command.
func (m MarkMigrate) Validate() error {
	switch {
	case len(m.AllocIDs) == 0:
		return commands.Invalid("AllocIDs", "name at least one allocation")
	case len(m.AllocIDs) > MaxMigrateAllocs:
		return commands.Invalid("AllocIDs", "%d allocations; at most %d at once", len(m.AllocIDs), MaxMigrateAllocs)
	}
	for _, id := range m.AllocIDs {
		if err := ValidID("AllocIDs", id); err != nil {
			return err
		}
	}
	return nil
}

// Decide implements commands.Command. Allocations that are gone, terminal,
// already marked, or no longer on a draining node are left alone (the
// drainer decided on an older snapshot); when none is left nothing is
// appended. Each marked allocation's modify index is a precondition, so a
// change in between (its client stopped it) makes the entry a 409.
func (m MarkMigrate) Decide(v projections.View, now time.Time, ids commands.IDs) (commands.Decision, error) {
	type jobKey struct{ ns, id string }
	byJob := map[jobKey][]events.AllocDesiredUpdate{}
	var pre []events.Precondition
	draining := map[string]bool{}
	yes := true
	want := slices.Clone(m.AllocIDs)
	slices.Sort(want)
	for i, id := range want {
		if i > 0 && want[i-1] == id {
			continue
		}
		a, err := allocs.Get(v, id)
		if errors.Is(err, projections.ErrNotFound) {
			continue
		}
		if err != nil {
			return commands.Decision{}, err
		}
		if a.Terminal() || isTrue(a.DesiredTransition.Migrate) {
			continue
		}
		dr, seen := draining[a.NodeID]
		if !seen {
			n, err := nodes.Get(v, a.NodeID)
			if err != nil && !errors.Is(err, projections.ErrNotFound) {
				return commands.Decision{}, err
			}
			dr = err == nil && n.Drain
			draining[a.NodeID] = dr
		}
		if !dr {
			continue
		}
		k := jobKey{a.Namespace, a.JobID}
		byJob[k] = append(byJob[k], events.AllocDesiredUpdate{ID: a.ID, DesiredTransition: events.DesiredTransition{Migrate: &yes}})
		pre = append(pre, events.Precondition{Table: allocs.Table, Key: a.ID, Op: events.ModifyIndex, Index: a.ModifyIndex})
	}
	if len(byJob) == 0 {
		return commands.Decision{}, nil
	}
	keys := make([]jobKey, 0, len(byJob))
	for k := range byJob {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b jobKey) int {
		if c := strings.Compare(a.ns, b.ns); c != 0 {
			return c
		}
		return strings.Compare(a.id, b.id)
	})
	var d commands.Decision
	evals := make([]events.Evaluation, 0, len(keys))
	for _, k := range keys {
		prio, typ := defaultEvalPriority, defaultEvalType
		if j, err := jobs.Get(v, k.ns, k.id); err == nil {
			prio, typ = j.Priority, j.Type
		}
		e := events.Evaluation{ID: ids(), Namespace: k.ns, Priority: prio, Type: typ,
			TriggeredBy: events.EvalTriggerNodeDrain, JobID: k.id, Status: events.EvalStatusPending,
			CreateTime: now.UnixNano(), ModifyTime: now.UnixNano()}
		evals = append(evals, e)
		d.Events = append(d.Events, &events.AllocsDesiredUpdated{EvalID: e.ID, Updates: byJob[k]})
	}
	d.Events = append(d.Events, &events.EvalsUpserted{Evals: evals})
	d.Preconditions = pre
	return d, nil
}

func isTrue(b *bool) bool { return b != nil && *b }
