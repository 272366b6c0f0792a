package allocs

import (
	"errors"
	"fmt"
	"slices"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/order"
)

// The projection's tables.
const (
	// Table holds one row per alloc, keyed by id.
	Table = "allocs"
	// ByNodeTable indexes allocs by "<node>\x00<id>".
	ByNodeTable = "allocs_by_node"
	// ByJobTable indexes allocs by "<namespace>\x00<job>\x00<id>".
	ByJobTable = "allocs_by_job"
	// ByEvalTable indexes allocs by "<eval>\x00<id>".
	ByEvalTable = "allocs_by_eval"
	// ByCreateTable indexes allocs by order.Key(create index, id).
	ByCreateTable = "allocs_by_create"
	// NodeChangesTable holds one empty row per node whose modify index is
	// the last index at which any of the node's allocations changed. It is
	// key-watched: a client's long-poll for its allocations waits on its
	// own node's key, not on every allocation change in the cluster.
	NodeChangesTable = "alloc_node_changes"
)

func init() {
	projections.WatchKeys(NodeChangesTable)
	for _, t := range []string{ByNodeTable, ByJobTable, ByEvalTable, ByCreateTable} {
		projections.ScanOnly(t)
	}
}

// Alloc is an allocation as readers see it.
type Alloc struct {
	events.Allocation
	CreateIndex uint64
	ModifyIndex uint64
}

// Projection maintains the allocs tables.
type Projection struct{}

var _ projections.Projection = Projection{}

// Name implements projections.Projection.
func (Projection) Name() string { return "allocs" }

// Version implements projections.Projection. 6: a live allocation that
// stays on its node no longer rewrites the node's usage row unless its
// resources changed (the row's create and modify indexes differ from 5's).
func (Projection) Version() int { return 6 }

// Tables implements projections.Projection.
func (Projection) Tables() []string {
	return []string{Table, ByNodeTable, ByJobTable, ByEvalTable, ByCreateTable, UsageTable, NodeChangesTable,
		BySigningKeyTable, SigningKeyLiveTable}
}

// Apply implements projections.Projection.
func (Projection) Apply(tx *projections.Tx, ev *events.Event) error {
	p, err := events.DecodeIf(ev, "AllocsPlaced", "AllocsDesiredUpdated", "AllocsClientUpdated", "AllocsDeleted")
	if p == nil || err != nil {
		return err
	}
	var nodes []string // whose allocations this event changes
	t := newTally()    // tally.go
	switch p := p.(type) {
	case *events.AllocsPlaced:
		for i := range p.Allocs {
			if err := place(tx, t, &p.Allocs[i]); err != nil {
				return err
			}
			nodes = append(nodes, p.Allocs[i].NodeID)
		}
	case *events.AllocsDesiredUpdated:
		for i := range p.Updates {
			u := &p.Updates[i]
			if err := patch(tx, t, u.ID, "", func(a *events.Allocation) { desired(a, u) }); err != nil {
				return err
			}
			if a, err := lookup(tx, u.ID); err != nil {
				return err
			} else if a != nil {
				nodes = append(nodes, a.NodeID)
			}
		}
	case *events.AllocsClientUpdated:
		for i := range p.Updates {
			u := &p.Updates[i]
			if err := patch(tx, t, u.ID, p.NodeID, func(a *events.Allocation) { client(a, u) }); err != nil {
				return err
			}
		}
		nodes = append(nodes, p.NodeID)
	case *events.AllocsDeleted:
		for _, id := range p.IDs {
			if a, err := lookup(tx, id); err != nil {
				return err
			} else if a != nil {
				nodes = append(nodes, a.NodeID)
			}
			if err := remove(tx, t, id); err != nil {
				return err
			}
		}
	}
	if err := t.flush(tx); err != nil {
		return err
	}
	return touchNodes(tx, nodes)
}

// touchNodes moves the NodeChangesTable row of each node to this index,
// once per node, in the order first named.
func touchNodes(tx *projections.Tx, nodes []string) error {
	var seen map[string]bool // for many nodes; a few are looked through
	if len(nodes) > 16 {
		seen = make(map[string]bool, len(nodes))
	}
	for i, n := range nodes {
		if n == "" || seen != nil && seen[n] || seen == nil && slices.Contains(nodes[:i], n) {
			continue
		}
		if seen != nil {
			seen[n] = true
		}
		if err := tx.Put(NodeChangesTable, n, nil); err != nil {
			return err
		}
	}
	return nil
}

// NodeChangeIndex returns the last index at which an allocation on node
// changed, 0 if none ever did.
func NodeChangeIndex(v projections.View, node string) (uint64, error) {
	r, err := v.Get(NodeChangesTable, node)
	if errors.Is(err, projections.ErrNotFound) {
		return 0, nil
	}
	return r.ModifyIndex, err
}

// NodeKey returns the ByNodeTable prefix of a node's allocs.
func NodeKey(node string) string { return node + "\x00" }

// JobKey returns the ByJobTable prefix of a job's allocs.
func JobKey(namespace, job string) string { return namespace + "\x00" + job + "\x00" }

// EvalKey returns the ByEvalTable prefix of an eval's allocs.
func EvalKey(eval string) string { return eval + "\x00" }

// indexKeys returns the secondary index rows of a, by table.
func indexKeys(a *events.Allocation) [3][2]string {
	return [3][2]string{
		{ByNodeTable, NodeKey(a.NodeID) + a.ID},
		{ByJobTable, JobKey(a.Namespace, a.JobID) + a.ID},
		{ByEvalTable, EvalKey(a.EvalID) + a.ID},
	}
}

// allocCodec encodes Table's rows.
var allocCodec = projections.Codec[events.Allocation]{Name: "alloc"}

// lookup returns a copy of the alloc id, nil when there is none: the
// caller may change it and put it.
func lookup(tx *projections.Tx, id string) (*Alloc, error) {
	a, r, err := projections.LookupValue(tx, &allocCodec, Table, id)
	if err != nil || a == nil {
		return nil, err
	}
	return &Alloc{Allocation: *a, CreateIndex: r.CreateIndex, ModifyIndex: r.ModifyIndex}, nil
}

// put writes a, which the caller then leaves alone.
func put(tx *projections.Tx, a *events.Allocation) error {
	return projections.PutValue(tx, &allocCodec, Table, a.ID, a)
}

func place(tx *projections.Tx, t *tally, a *events.Allocation) error {
	if a.ID == "" {
		return nil
	}
	old, err := lookup(tx, a.ID)
	if err != nil {
		return err
	}
	cp := *a // the event's is shared with the other projections
	if err := put(tx, &cp); err != nil {
		return err
	}
	var before *events.Allocation
	if old != nil {
		before = &old.Allocation
	}
	if err := adjustUsage(tx, t, before, a); err != nil {
		return err
	}
	newKeys := indexKeys(a)
	if old == nil {
		if err := tx.PutIndex(ByCreateTable, order.Key(tx.Index(), a.ID)); err != nil {
			return err
		}
	} else {
		for i, k := range indexKeys(&old.Allocation) {
			if k != newKeys[i] {
				if _, err := tx.Delete(k[0], k[1]); err != nil {
					return err
				}
			}
		}
	}
	for _, k := range newKeys {
		if err := tx.PutIndex(k[0], k[1]); err != nil {
			return err
		}
	}
	if a.PreviousAllocation == "" || a.PreviousAllocation == a.ID {
		return nil
	}
	return patch(tx, t, a.PreviousAllocation, "", func(prev *events.Allocation) { prev.NextAllocation = a.ID })
}

// patch applies fn to the alloc id and writes it back, tallying its usage
// in t; an unknown id, or one on another node than node (when set), is
// left alone.
func patch(tx *projections.Tx, t *tally, id, node string, fn func(*events.Allocation)) error {
	a, err := lookup(tx, id)
	if err != nil || a == nil || (node != "" && a.NodeID != node) {
		return err
	}
	before := a.Allocation
	fn(&a.Allocation)
	a.ModifyTime = tx.Time()
	if err := put(tx, &a.Allocation); err != nil {
		return err
	}
	return adjustUsage(tx, t, &before, &a.Allocation)
}

func desired(a *events.Allocation, u *events.AllocDesiredUpdate) {
	if u.DesiredStatus != "" {
		a.DesiredStatus = u.DesiredStatus
	}
	if u.DesiredDescription != "" {
		a.DesiredDescription = u.DesiredDescription
	}
	t := &a.DesiredTransition
	if u.DesiredTransition.Migrate != nil {
		t.Migrate = u.DesiredTransition.Migrate
	}
	if u.DesiredTransition.Reschedule != nil {
		t.Reschedule = u.DesiredTransition.Reschedule
	}
	if u.DesiredTransition.ForceReschedule != nil {
		t.ForceReschedule = u.DesiredTransition.ForceReschedule
	}
	if u.DesiredTransition.NoShutdownDelay != nil {
		t.NoShutdownDelay = u.DesiredTransition.NoShutdownDelay
	}
	if u.ClientStatus != "" {
		a.ClientStatus = u.ClientStatus
	}
	if u.FollowupEvalID != "" {
		a.FollowupEvalID = u.FollowupEvalID
	}
}

func client(a *events.Allocation, u *events.AllocClientUpdate) {
	if u.ClientStatus != "" {
		a.ClientStatus = u.ClientStatus
	}
	a.ClientDescription = u.ClientDescription
	if u.TaskStates != nil {
		a.TaskStates = u.TaskStates
	}
	if u.DeploymentStatus != nil {
		a.DeploymentStatus = u.DeploymentStatus
	}
}

func remove(tx *projections.Tx, t *tally, id string) error {
	old, err := lookup(tx, id)
	if err != nil || old == nil {
		return err
	}
	if _, err := tx.Delete(Table, id); err != nil {
		return err
	}
	if err := adjustUsage(tx, t, &old.Allocation, nil); err != nil {
		return err
	}
	for _, k := range indexKeys(&old.Allocation) {
		if _, err := tx.Delete(k[0], k[1]); err != nil {
			return err
		}
	}
	_, err = tx.Delete(ByCreateTable, order.Key(old.CreateIndex, id))
	return err
}

func fromRow(r projections.Row) (*Alloc, error) {
	a := &Alloc{CreateIndex: r.CreateIndex, ModifyIndex: r.ModifyIndex}
	if err := events.Unmarshal(r.Value, &a.Allocation); err != nil {
		return nil, fmt.Errorf("decode alloc row: %w", err)
	}
	return a, nil
}
