package client

import (
	"slices"

	"github.com/ordoplane/ordo/client/allocrunner"
	"github.com/ordoplane/ordo/events"
)

// watchCursor is what the watch loop knows of the servers' answers
// between two of them: the decision's state.
type watchCursor struct {
	// Seen is the index of the newest answer the client acted on (also
	// kept in the state directory, so a restarted client starts from it).
	Seen uint64
	// Regressed is set after an answer older than Seen, which the client
	// did not act on: a second one in a row is believed.
	Regressed bool
}

// watchAnswer is one answer of the servers to the allocation watch.
type watchAnswer struct {
	// Err is set when the call failed (no server answered, 5xx such as
	// "no cluster leader", an answer that could not be read).
	Err error
	// Index is the answer's X-Nomad-Index; 0 when it carried none.
	Index uint64
	// Listed are the ids of the allocations the servers list for the node.
	Listed []string
}

// watchDecision is what to do with an answer.
type watchDecision struct {
	// Trusted says the answer describes the servers' state as of Index or
	// later: the client starts, updates and removes allocations by it.
	// An untrusted answer changes nothing on the node.
	Trusted bool
	// Remove are the local allocations, of those given, that a trusted
	// answer does not list, sorted: the servers no longer have them.
	Remove []string
	// Cursor is the state to decide the next answer with.
	Cursor watchCursor
	// Query is the index the next blocking query names.
	Query uint64
}

// decideWatch decides what an answer of the servers to the allocation
// watch does, given the cursor and the local allocations (those not
// already being removed). It is the rule that keeps a transient answer
// from destroying anything:
//
//   - a failed call, or an answer without an index, is not acted on;
//   - an answer at an index at or past Seen is the servers' state: every
//     local allocation it does not list is removed (an empty list removes
//     them all). A snapshot restore counts here: the servers report the
//     restore's index for every state it replaced, which is past all the
//     client saw before it;
//   - an answer older than Seen (a server behind the one that answered
//     before: a leader that has not applied its predecessors' entries, a
//     restarted server catching up) is not acted on, and the next query
//     blocks at Seen, so the servers answer once they have reached it or
//     after a whole wait. A second older answer in a row, after that
//     wait, is believed: the servers' state went back for good (it was
//     replaced by servers that report no newer index for it), and the
//     client follows it rather than run forever what they no longer have.
//
// decideWatch is pure: it reads only its arguments.
func decideWatch(cur watchCursor, ans watchAnswer, local []string) watchDecision {
	if ans.Err != nil || ans.Index == 0 {
		return watchDecision{Cursor: cur, Query: cur.Seen}
	}
	if ans.Index < cur.Seen && !cur.Regressed {
		return watchDecision{Cursor: watchCursor{Seen: cur.Seen, Regressed: true}, Query: cur.Seen}
	}
	listed := make(map[string]bool, len(ans.Listed))
	for _, id := range ans.Listed {
		listed[id] = true
	}
	var remove []string
	for _, id := range local {
		if !listed[id] {
			remove = append(remove, id)
		}
	}
	slices.Sort(remove)
	remove = slices.Compact(remove)
	return watchDecision{Trusted: true, Remove: remove, Cursor: watchCursor{Seen: ans.Index}, Query: ans.Index}
}

// removedEvent is the task event of a task killed because the servers no
// longer list its allocation. It is recorded on the node only (the servers
// no longer have the allocation to record it on); Nomad's client kills a
// collected allocation the same way.
func removedEvent(nodeID string) events.TaskEvent {
	return events.TaskEvent{Type: events.TaskEventKilling,
		Message: "Allocation removed by the servers (no longer listed for node " + nodeID + "): killing the task"}
}

// destroy kills and removes the allocations of ids, which the servers no
// longer list as of index: each is marked removing (its state is no
// longer sent: the servers would refuse it), its running tasks record
// removedEvent and are killed through their drivers without shutdown
// delay (kill signal, then SIGKILL after the kill timeout), and gc removes
// its directory and record once its runner has seen every task dead.
func (c *Client) destroy(ids []string, index uint64) {
	var rs []*allocrunner.Runner
	c.mu.Lock()
	for _, id := range ids {
		e, ok := c.mu.runners[id]
		if !ok || e.removing {
			continue
		}
		e.removing = true
		delete(c.mu.dirty, id)
		rs = append(rs, e.r)
	}
	c.mu.Unlock()
	for _, r := range rs {
		a := r.Alloc()
		args := []any{"alloc_id", r.ID(), "namespace", a.Namespace, "job_id", a.JobID, "group", a.TaskGroup, "index", index}
		if r.Terminal() {
			c.log.Info("allocation no longer listed by the servers; removing it", args...)
		} else {
			c.log.Warn("allocation no longer listed by the servers; killing its tasks and removing it", args...)
		}
		c.met.allocsRemoved.Inc()
		r.Kill(removedEvent(c.id), false)
	}
	c.gc() // those already dead go at once
}
