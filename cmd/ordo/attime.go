package main

import (
	"fmt"
	"net/url"
	"strconv"
	"time"
)

// atParams returns the query parameters the -at-index and -at-time flags
// add to every request, nil when neither is set. -at-time takes an RFC
// 3339 time, or a duration meaning that long ago (2h, 90m).
func (g *globals) atParams(now time.Time) (url.Values, error) {
	switch {
	case g.atIndex > 0 && g.atTime != "":
		return nil, fmt.Errorf("give -at-index or -at-time, not both")
	case g.atIndex > 0:
		return url.Values{"at_index": {strconv.FormatUint(g.atIndex, 10)}}, nil
	case g.atTime != "":
		t, err := time.Parse(time.RFC3339Nano, g.atTime)
		if err != nil {
			d, derr := time.ParseDuration(g.atTime)
			if derr != nil || d < 0 {
				return nil, fmt.Errorf("invalid -at-time %q: want an RFC 3339 time such as 2026-11-30T14:02:00Z, or a duration ago such as 2h", g.atTime)
			}
			t = now.Add(-d)
		}
		return url.Values{"at_time": {t.UTC().Format(time.RFC3339Nano)}}, nil
	}
	return nil, nil
}
