package main

import (
	"fmt"
	"time"

	"github.com/ordoplane/ordo/cmd/agent"
)

// limitsBlock is the agent file's limits block, named as Nomad's
// (docs/operations.md):
//
//	limits {
//	  http_read_timeout         = "10s"  # a request's line and headers
//	  http_body_timeout         = "30s"  # a request's whole body, after its headers
//	  http_write_timeout        = "60s"  # an answer (blocking queries add their wait; streams roll it per write)
//	  http_idle_timeout         = "90s"  # a kept-alive connection between requests
//	  http_max_conns_per_client = 100    # connections one IP may hold open; 0 for no cap
//	}
//
// An attribute left out keeps its default; a timeout of "0" turns it off.
type limitsBlock struct {
	HTTPReadTimeout       *string `hcl:"http_read_timeout,optional"`
	HTTPBodyTimeout       *string `hcl:"http_body_timeout,optional"`
	HTTPWriteTimeout      *string `hcl:"http_write_timeout,optional"`
	HTTPIdleTimeout       *string `hcl:"http_idle_timeout,optional"`
	HTTPMaxConnsPerClient *int    `hcl:"http_max_conns_per_client,optional"`
}

// applyTo sets in c what the block sets; errors name limits.<attribute>
// and the file.
func (b *limitsBlock) applyTo(c *agent.Config, path string) error {
	for _, f := range []struct {
		name string
		v    *string
		dst  *time.Duration
	}{
		{"http_read_timeout", b.HTTPReadTimeout, &c.HTTP.ReadTimeout},
		{"http_body_timeout", b.HTTPBodyTimeout, &c.HTTP.BodyTimeout},
		{"http_write_timeout", b.HTTPWriteTimeout, &c.HTTP.WriteTimeout},
		{"http_idle_timeout", b.HTTPIdleTimeout, &c.HTTP.IdleTimeout},
	} {
		if f.v == nil {
			continue
		}
		d, err := time.ParseDuration(*f.v)
		switch {
		case err != nil || d < 0:
			return fmt.Errorf("limits.%s in %s: %q is not a duration (30s, 5m), or 0 for none", f.name, path, *f.v)
		case d == 0:
			*f.dst = -1 // off
		case d < time.Millisecond:
			return fmt.Errorf("limits.%s in %s: %q is under a millisecond", f.name, path, *f.v)
		default:
			*f.dst = d
		}
	}
	if n := b.HTTPMaxConnsPerClient; n != nil {
		switch {
		case *n < 0:
			return fmt.Errorf("limits.http_max_conns_per_client in %s: %d must not be negative; 0 sets no cap", path, *n)
		case *n == 0:
			c.HTTP.MaxConnsPerClient = -1 // no cap, as Nomad's 0
		default:
			c.HTTP.MaxConnsPerClient = *n
		}
	}
	return nil
}
