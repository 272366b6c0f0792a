package plan

import (
	"time"

	"github.com/ordoplane/ordo/events"
)

// stamp returns the placements with the commit's time as Nomad's plan
// applier sets it: CreateTime when the allocation is new (an in-place
// update keeps the one it had) and ModifyTime always, Unix nanoseconds.
// The time is decided before the log, so applying the entry reads none.
// A zero now (a caller without a clock) leaves them as they are.
func stamp(placements []events.Allocation, now time.Time) []events.Allocation {
	if len(placements) == 0 || now.IsZero() {
		return placements
	}
	t := now.UnixNano()
	out := make([]events.Allocation, len(placements))
	for i, a := range placements {
		if a.CreateTime == 0 {
			a.CreateTime = t
		}
		a.ModifyTime = t
		out[i] = a
	}
	return out
}
