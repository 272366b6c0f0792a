package node

import (
	"sort"
	"time"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/allocs"
	"github.com/ordoplane/ordo/projections/jobs"
)

// nodeEvals returns one pending eval per job a change of node n may
// affect: every job with a non-terminal allocation on it, and every
// running system or sysbatch job (which may place on it). They commit in
// the same entry as the node's change, as Nomad's node updates do.
func nodeEvals(v projections.View, nodeID string, trigger string, now time.Time, ids commands.IDs) ([]events.Evaluation, error) {
	type key struct{ ns, id string }
	affected := map[key]bool{}
	onNode, err := allocs.ByNode(v, nodeID)
	if err != nil {
		return nil, err
	}
	for _, a := range onNode {
		if !a.Terminal() {
			affected[key{a.Namespace, a.JobID}] = true
		}
	}
	all, err := jobs.List(v, jobs.AllNamespaces, "")
	if err != nil {
		return nil, err
	}
	byKey := map[key]*jobs.Stub{}
	for _, j := range all {
		byKey[key{j.Namespace, j.ID}] = j
		if !j.Stop && (j.Type == events.JobTypeSystem || j.Type == events.JobTypeSysbatch) {
			affected[key{j.Namespace, j.ID}] = true
		}
	}
	keys := make([]key, 0, len(affected))
	for k := range affected {
		if _, ok := byKey[k]; ok {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].ns != keys[j].ns {
			return keys[i].ns < keys[j].ns
		}
		return keys[i].id < keys[j].id
	})
	out := make([]events.Evaluation, 0, len(keys))
	for _, k := range keys {
		j := byKey[k]
		out = append(out, events.Evaluation{
			ID: ids(), Namespace: j.Namespace, Priority: j.Priority, Type: j.Type, TriggeredBy: trigger,
			JobID: j.ID, NodeID: nodeID, Status: events.EvalStatusPending,
			CreateTime: now.UnixNano(), ModifyTime: now.UnixNano(),
		})
	}
	return out, nil
}

// withNodeEvals appends the evals of a node change to d.
func withNodeEvals(d commands.Decision, v projections.View, nodeID, trigger string, now time.Time, ids commands.IDs) (commands.Decision, error) {
	evs, err := nodeEvals(v, nodeID, trigger, now, ids)
	if err != nil || len(evs) == 0 {
		return d, err
	}
	d.Events = append(d.Events, &events.EvalsUpserted{Evals: evs})
	return d, nil
}

// disconnectTolerant reports whether the node runs a live allocation whose
// group tolerates disconnects (a disconnect block, or max_client_disconnect).
func disconnectTolerant(v projections.View, nodeID string) (bool, error) {
	onNode, err := allocs.ByNode(v, nodeID)
	if err != nil {
		return false, err
	}
	for _, a := range onNode {
		if a.Terminal() {
			continue
		}
		j, err := jobs.Get(v, a.Namespace, a.JobID)
		if err != nil {
			continue
		}
		for _, tg := range j.TaskGroups {
			if tg.Name == a.TaskGroup && (tg.Disconnect != nil || tg.MaxClientDisconnect > 0) {
				return true, nil
			}
		}
	}
	return false, nil
}
