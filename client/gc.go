package client

import (
	"cmp"
	"slices"

	"github.com/ordoplane/ordo/client/allocrunner"
)

// gc removes the directory and record of terminal allocations: at once
// for those the servers no longer list (or refused an update of), and
// beyond the newest
// GCMaxAllocs for the rest. An allocation whose final state the servers
// have not acknowledged is kept.
func (c *Client) gc() {
	c.mu.Lock()
	type cand struct {
		id      string
		e       *entry
		created int64
	}
	var keep []cand
	var remove []*allocrunner.Runner
	for id, e := range c.mu.runners {
		if !e.r.Terminal() || !isDone(e.r) {
			continue
		}
		// The servers no longer list it (or refused its update): there is
		// nothing left to deliver.
		if e.removing || e.refused && !c.mu.dirty[id] {
			remove = append(remove, e.r)
			continue
		}
		if c.mu.dirty[id] {
			continue
		}
		keep = append(keep, cand{id, e, e.r.Alloc().CreateTime})
	}
	if extra := len(keep) - c.cfg.GCMaxAllocs; extra > 0 {
		slices.SortFunc(keep, func(a, b cand) int {
			return cmp.Or(cmp.Compare(a.created, b.created), cmp.Compare(a.id, b.id))
		})
		for _, k := range keep[:extra] {
			remove = append(remove, k.e.r)
		}
	}
	c.forgetLocked(remove)
	c.mu.Unlock()
	c.removeAll(remove)
}

// forgetLocked drops the runners of rs: they are not run again.
func (c *Client) forgetLocked(rs []*allocrunner.Runner) {
	for _, r := range rs {
		delete(c.mu.runners, r.ID())
		delete(c.mu.dirty, r.ID())
		c.mu.destroyed[r.ID()] = true
	}
}

// removeAll deletes the directories and records of rs.
func (c *Client) removeAll(rs []*allocrunner.Runner) {
	for _, r := range rs {
		if err := r.Dir().Remove(); err != nil {
			c.log.Error("gc alloc dir", "alloc_id", r.ID(), "err", err)
		}
		if err := c.store.DeleteAlloc(r.ID()); err != nil {
			c.log.Error("gc alloc record", "alloc_id", r.ID(), "err", err)
		}
		c.log.Info("allocation collected", "alloc_id", r.ID())
	}
}

func isDone(r *allocrunner.Runner) bool {
	select {
	case <-r.Done():
		return true
	default:
		return false
	}
}
