package driver

import "context"

// Sweeper is a Driver that can find the tasks it started on this node by
// itself (docker, by container labels), so the client can remove those
// of allocations it has no record of: left when its state was lost, or
// by a crash between starting a task and recording it.
type Sweeper interface {
	// Sweep removes the tasks of allocations for which known reports
	// false, and returns how many it removed. The client calls it once
	// its records are restored, before it starts anything new.
	Sweep(ctx context.Context, known func(allocID string) bool) (int, error)
}
