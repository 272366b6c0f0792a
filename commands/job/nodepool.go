package job

import (
	"errors"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/nodepools"
)

// poolExists refuses a job in a node pool that does not exist, as Nomad's
// register does ("job %q is in nonexistent node pool %q"); a created pool
// must still exist when the entry is applied. Built-in pools always do.
func poolExists(v projections.View, job *events.Job) ([]events.Precondition, error) {
	pool := nodepools.Of(job.NodePool)
	if nodepools.BuiltIn(pool) != nil {
		return nil, nil
	}
	if _, err := v.Get(nodepools.Table, pool); errors.Is(err, projections.ErrNotFound) {
		return nil, commands.Invalid("job.node_pool", "job %q is in nonexistent node pool %q", job.ID, pool)
	} else if err != nil {
		return nil, err
	}
	return []events.Precondition{{Table: nodepools.Table, Key: pool, Op: events.Exists}}, nil
}
