package client

import (
	"context"

	"github.com/ordoplane/ordo/client/driver"
	"github.com/ordoplane/ordo/client/state"
)

// sweepDrivers asks the drivers that can find their own tasks
// (driver.Sweeper) to remove those of allocations the client has no
// record of. With unreadable records it sweeps nothing: their tasks
// would look unknown.
func (c *Client) sweepDrivers(ctx context.Context, recs []*state.Alloc, unreadable int) {
	if unreadable > 0 {
		c.log.Warn("driver sweep skipped: some allocation records are unreadable")
		return
	}
	known := make(map[string]bool, len(recs))
	for _, r := range recs {
		known[r.Alloc.ID] = true
	}
	for _, d := range c.cfg.Drivers {
		s, ok := d.(driver.Sweeper)
		if !ok {
			continue
		}
		n, err := s.Sweep(ctx, func(id string) bool { return known[id] })
		if err != nil {
			c.log.Warn("driver sweep", "driver", d.Name(), "err", err)
		}
		if n > 0 {
			c.log.Info("removed tasks of allocations the client has no record of", "driver", d.Name(), "count", n)
		}
	}
}
