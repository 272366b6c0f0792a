package main

import (
	"fmt"
	"time"

	"github.com/ordoplane/ordo/cmd/agent"
)

// planRejectionTrackerBlock is the server block's plan_rejection_tracker
// block, as Nomad's (docs/operations.md):
//
//	server {
//	  plan_rejection_tracker {
//	    enabled        = true
//	    node_threshold = 100    # rejections of one node within the window
//	    node_window    = "5m"
//	  }
//	}
//
// A node rejected node_threshold times within node_window is marked
// ineligible; attributes left out keep the defaults (15 in 10m).
type planRejectionTrackerBlock struct {
	Enabled       *bool   `hcl:"enabled,optional"`
	NodeThreshold *int    `hcl:"node_threshold,optional"`
	NodeWindow    *string `hcl:"node_window,optional"`
}

// applyTo sets in c what the block sets; errors name the attribute and
// the file.
func (b *planRejectionTrackerBlock) applyTo(c *agent.PlanRejectionTracker, path string) error {
	if b.Enabled != nil {
		c.Enabled = *b.Enabled
	}
	if b.NodeThreshold != nil {
		if *b.NodeThreshold <= 0 {
			return fmt.Errorf("server.plan_rejection_tracker.node_threshold in %s: %d must be positive", path, *b.NodeThreshold)
		}
		c.NodeThreshold = *b.NodeThreshold
	}
	if b.NodeWindow != nil {
		d, err := time.ParseDuration(*b.NodeWindow)
		if err != nil || d <= 0 {
			return fmt.Errorf("server.plan_rejection_tracker.node_window in %s: %q is not a positive duration such as 5m", path, *b.NodeWindow)
		}
		c.NodeWindow = d
	}
	return nil
}
