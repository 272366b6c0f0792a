package client

import (
	"context"
	"errors"
	"fmt"

	"github.com/ordoplane/ordo/api"
	"github.com/ordoplane/ordo/client/serverapi"
	"github.com/ordoplane/ordo/events"
)

// watchLoop watches the node's allocations with the blocking query and
// reconciles the runners with each answer it can trust (decideWatch): new
// allocations start, changed ones are updated (a stop kills them), and
// allocations the servers no longer list are killed and removed. An
// answer older than what the client already acted on changes nothing.
func (c *Client) watchLoop(ctx, runCtx context.Context) {
	var cur watchCursor
	if seen, err := c.store.WatchIndex(); err != nil {
		c.log.Error("cannot read the stored watch index; starting from none", "err", err)
	} else {
		cur.Seen = seen
	}
	var index uint64
	failures := 0
	for ctx.Err() == nil {
		list, next, err := c.api.Allocations(ctx, c.id, index, c.cfg.WatchWait)
		if err == nil && next == 0 {
			err = errNoIndex
		}
		if err == nil {
			var d watchDecision
			d, err = c.watched(ctx, runCtx, cur, list, next)
			if d.Cursor.Seen != cur.Seen {
				if perr := c.store.PutWatchIndex(d.Cursor.Seen); perr != nil {
					c.log.Error("cannot store the watch index", "index", d.Cursor.Seen, "err", perr)
				}
			}
			cur = d.Cursor
			if err == nil {
				index = d.Query
			}
		}
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			failures++
			c.met.watchFailures.Inc()
			wait := c.backoff(failures)
			c.logFailure("allocation watch failed", failures, "err", err, "retry_in", wait)
			if !c.sleep(ctx, wait) {
				return
			}
			continue // with the same index: the next answer comes at once
		}
		failures = 0
	}
}

// errNoIndex is the error of an allocation list answered without an
// X-Nomad-Index: it cannot be ordered against earlier answers.
var errNoIndex = errors.New("client: allocation list answered without an index")

// watched acts on one answer of the allocation watch as decideWatch
// says: a trusted answer is synced, an untrusted one only logged.
func (c *Client) watched(ctx, runCtx context.Context, cur watchCursor, list []serverapi.Alloc, index uint64) (watchDecision, error) {
	listed := make([]string, len(list))
	for i := range list {
		listed[i] = list[i].ID
	}
	d := decideWatch(cur, watchAnswer{Index: index, Listed: listed}, c.localAllocs())
	switch {
	case !d.Trusted:
		c.log.Warn("servers answered an older allocation list than the client acted on; not acting on it",
			"index", index, "seen", cur.Seen, "listed", len(list))
		return d, nil
	case index < cur.Seen:
		c.log.Warn("servers answered an older allocation list twice in a row; following it",
			"index", index, "seen", cur.Seen, "listed", len(list))
	}
	return d, c.syncAllocs(ctx, runCtx, list, d.Remove, index)
}

// localAllocs returns the ids of the allocations the client runs or
// keeps, but those it is already removing.
func (c *Client) localAllocs() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	ids := make([]string, 0, len(c.mu.runners))
	for id, e := range c.mu.runners {
		if !e.removing {
			ids = append(ids, id)
		}
	}
	return ids
}

// jobKey names a job version.
type jobKey struct {
	ns, id  string
	version uint64
}

// syncAllocs reconciles the runners with the servers' list of the node's
// allocations at index, and destroys those of remove (decideWatch).
func (c *Client) syncAllocs(ctx, runCtx context.Context, list []serverapi.Alloc, remove []string, index uint64) error {
	jobs := map[jobKey]*events.Job{}
	job := func(a *events.Allocation) (*events.Job, error) {
		k := jobKey{a.Namespace, a.JobID, a.JobVersion}
		if j, ok := jobs[k]; ok {
			return j, nil
		}
		j, err := c.api.Job(ctx, a.Namespace, a.JobID, a.JobVersion)
		if err != nil {
			return nil, err
		}
		jobs[k] = j
		return j, nil
	}
	listed := make(map[string]bool, len(list))
	var errs []error
	for i := range list {
		a := &list[i]
		listed[a.ID] = true
		c.mu.Lock()
		e := c.mu.runners[a.ID]
		destroyed := c.mu.destroyed[a.ID]
		c.mu.Unlock()
		switch {
		case e != nil:
			if e.modifyIndex == a.AllocModifyIndex && a.AllocModifyIndex != 0 {
				continue
			}
			var j *events.Job
			if a.JobVersion != e.jobVersion {
				var err error
				if j, err = job(&a.Allocation); err != nil {
					errs = append(errs, err)
					continue
				}
			}
			e.r.Update(a.Allocation, j)
			c.mu.Lock()
			e.modifyIndex, e.refused = a.AllocModifyIndex, false
			if j != nil {
				e.jobVersion = j.Version
			}
			// The servers marked it unknown: they took this node for cut
			// off, even if none of our calls failed, and keep it
			// initializing until it reports its allocations again (N1).
			// Re-send this one's state, as Nomad's client does.
			resend := a.ClientStatus == events.AllocClientUnknown && a.DesiredStatus == events.AllocDesiredRun
			if resend {
				c.mu.dirty[a.ID], c.mu.force = true, true
			}
			c.mu.Unlock()
			if resend {
				c.wakeUpdates()
			}
		case destroyed, a.Terminal():
			// Not ours to run: stopped before it reached this node, done,
			// or already removed here.
		default:
			j, err := job(&a.Allocation)
			if api.IsNotFound(err) {
				c.log.Error("allocation's job version not found; not running it", "alloc_id", a.ID,
					"job_id", a.JobID, "job_version", a.JobVersion)
				continue
			}
			if err != nil {
				errs = append(errs, err)
				continue
			}
			r, err := c.newRunner(a.Allocation, j, nil)
			if err != nil {
				c.log.Error("cannot run allocation", "alloc_id", a.ID, "err", err)
				continue
			}
			c.mu.Lock()
			c.mu.runners[a.ID] = &entry{r: r, modifyIndex: a.AllocModifyIndex, jobVersion: j.Version}
			c.mu.dirty[a.ID] = true
			c.mu.Unlock()
			c.log.Info("running allocation", "alloc_id", a.ID, "job_id", a.JobID, "group", a.TaskGroup)
			c.startRunner(runCtx, r)
			c.wakeUpdates()
		}
	}
	// Forget removed allocations the servers forgot too.
	c.mu.Lock()
	for id := range c.mu.destroyed {
		if !listed[id] {
			delete(c.mu.destroyed, id)
		}
	}
	c.mu.Unlock()
	c.destroy(remove, index)
	c.gc()
	if len(errs) > 0 {
		return fmt.Errorf("sync allocations: %w", errors.Join(errs...))
	}
	return nil
}
