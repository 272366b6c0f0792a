package client

import (
	"context"
	"errors"
	"time"

	"github.com/ordoplane/ordo/client/serverapi"
	"github.com/ordoplane/ordo/events"
)

// defaultTTL is the heartbeat TTL assumed when a server answers none.
const defaultTTL = 10 * time.Second

// heartbeatLoop registers the node, then heartbeats within the TTL the
// servers answer, registering again when they no longer know the node.
// After failures (servers unreachable), the first success forces an alloc
// update, so a reconnecting node reports its allocations (N1).
func (c *Client) heartbeatLoop(ctx context.Context) {
	var (
		registered bool
		failures   int
		ttl        time.Duration
	)
	for ctx.Err() == nil {
		start := c.cfg.Clock.Now()
		var err error
		if !registered {
			node := c.Node()
			if ttl, err = c.api.Register(ctx, node); err == nil {
				registered = true
				c.log.Info("node registered", "name", node.Name, "ttl", ttl)
				c.regOnce.Do(func() { close(c.registered) })
				c.forceSync()
			}
		}
		if err == nil {
			ttl, err = c.api.Heartbeat(ctx, c.id, events.NodeStatusReady)
		}
		if ctx.Err() != nil {
			return
		}
		switch {
		case errors.Is(err, serverapi.ErrNodeNotFound):
			c.log.Warn("servers do not know the node: registering again")
			c.met.heartbeatFailures.Inc()
			registered = false
			continue
		case err != nil:
			failures++
			c.met.heartbeatFailures.Inc()
			wait := c.backoff(failures)
			c.logFailure("heartbeat failed", failures, "err", err, "retry_in", wait)
			if !c.waitHeartbeat(ctx, wait, &registered) {
				return
			}
			continue
		}
		c.met.heartbeatSeconds.Observe(c.cfg.Clock.Now().Sub(start).Seconds())
		if failures > 0 {
			c.log.Info("servers reachable again", "failures", failures)
			failures = 0
			c.forceSync()
		}
		if ttl <= 0 {
			ttl = defaultTTL
		}
		// Heartbeat within the TTL, at a random point of its last quarter.
		if !c.waitHeartbeat(ctx, ttl-time.Duration(float64(ttl)/4*c.randFloat()), &registered) {
			return
		}
	}
}

// waitHeartbeat waits d, or less when asked to heartbeat or register at
// once; false when ctx ended.
func (c *Client) waitHeartbeat(ctx context.Context, d time.Duration, registered *bool) bool {
	t := c.cfg.Clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C():
	case <-c.heartbeatNow:
	case <-c.reregister:
		*registered = false
	case <-ctx.Done():
		return false
	}
	return true
}

// forceSync sends every allocation's state again, and an update even
// with none: after a (re-)registration or a reconnection.
func (c *Client) forceSync() {
	c.mu.Lock()
	c.mu.force = true
	for id := range c.mu.runners {
		c.mu.dirty[id] = true
	}
	c.mu.Unlock()
	c.wakeUpdates()
}
