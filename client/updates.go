package client

import (
	"context"
	"errors"
	"slices"

	"github.com/ordoplane/ordo/client/serverapi"
	"github.com/ordoplane/ordo/events"
)

// maxBatch is the most allocation updates one call carries (the servers
// take up to 1024).
const maxBatch = 256

// updateLoop sends the allocations' changes to the servers: it waits for
// a change, coalesces for UpdateInterval, then sends the latest state of
// every changed allocation, retrying with backoff until the servers
// acknowledge it. An allocation leaves the queue only once the state the
// servers acknowledged is its latest.
func (c *Client) updateLoop(ctx context.Context) {
	select {
	case <-c.registered:
	case <-ctx.Done():
		return
	}
	failures := 0
	for {
		select {
		case <-c.updateCh:
		case <-ctx.Done():
			return
		}
		if !c.sleep(ctx, c.cfg.UpdateInterval) {
			return
		}
		for ctx.Err() == nil {
			sent, err := c.sendUpdates(ctx)
			if err == nil {
				failures = 0
				if !sent {
					break
				}
				continue // more may be queued (a batch limit, or changes while sending)
			}
			if ctx.Err() != nil {
				return
			}
			if _, _, ok := serverapi.AllocIndex(err); ok {
				continue // the refused alloc was dropped: send the rest at once
			}
			failures++
			c.met.updateFailures.Inc()
			if errors.Is(err, serverapi.ErrNodeNotFound) {
				select {
				case c.reregister <- struct{}{}:
				default:
				}
			}
			wait := c.backoff(failures)
			c.logFailure("alloc update failed", failures, "err", err, "retry_in", wait)
			if !c.sleep(ctx, wait) {
				return
			}
		}
	}
}

// sendUpdates sends one batch of queued updates; sent is false when there
// was nothing to send.
func (c *Client) sendUpdates(ctx context.Context) (sent bool, err error) {
	c.mu.Lock()
	force := c.mu.force
	ids := make([]string, 0, len(c.mu.dirty))
	for id := range c.mu.dirty {
		if e, ok := c.mu.runners[id]; ok && !e.removing {
			ids = append(ids, id)
		} else {
			delete(c.mu.dirty, id)
		}
	}
	c.mu.force = false
	runners := make(map[string]*entry, len(ids))
	for _, id := range ids {
		runners[id] = c.mu.runners[id]
	}
	c.mu.Unlock()
	if len(ids) == 0 && !force {
		return false, nil
	}
	slices.Sort(ids)
	if len(ids) > maxBatch {
		ids = ids[:maxBatch]
	}
	updates := make([]events.AllocClientUpdate, len(ids))
	versions := make([]uint64, len(ids))
	for i, id := range ids {
		updates[i], versions[i] = runners[id].r.ClientUpdate()
	}
	start := c.cfg.Clock.Now()
	_, err = c.api.UpdateAllocs(ctx, c.id, updates)
	if err != nil {
		c.mu.Lock()
		c.mu.force = c.mu.force || force
		c.mu.Unlock()
		if i, reason, ok := serverapi.AllocIndex(err); ok && i < len(ids) {
			// The servers do not have this allocation (collected, or
			// never theirs): its state can never be delivered.
			c.log.Warn("servers refused an allocation's update; dropping it", "alloc_id", ids[i], "reason", reason)
			c.mu.Lock()
			delete(c.mu.dirty, ids[i])
			if e, ok := c.mu.runners[ids[i]]; ok {
				e.refused = true
			}
			c.mu.Unlock()
		}
		return false, err
	}
	c.met.updateSeconds.Observe(c.cfg.Clock.Now().Sub(start).Seconds())
	c.mu.Lock()
	for i, id := range ids {
		if e, ok := c.mu.runners[id]; ok {
			if _, v := e.r.ClientUpdate(); v != versions[i] {
				continue // changed meanwhile: send again
			}
		}
		delete(c.mu.dirty, id)
	}
	c.mu.Unlock()
	if force {
		// A reconnecting node becomes ready on the heartbeat after its
		// alloc update (N1): do not wait a whole TTL for it.
		select {
		case c.heartbeatNow <- struct{}{}:
		default:
		}
	}
	c.gc()
	return true, nil
}
