package main

import (
	"fmt"
	"time"

	"github.com/ordoplane/ordo/cmd/agent"
)

// keyringBlock is the agent file's keyring block (docs/keyring.md):
//
//	keyring {
//	  server_token = "…"     # shared by every server; presented to fetch key material from a peer
//	  gc_interval  = "10m"   # time between keyring GC passes
//	  gc_threshold = "1h"    # how old an inactive key must be to be collected; negative: any age
//	}
//
// An attribute left out keeps its default. The server token is a secret:
// it is never shown (not in /v1/agent/self, not in errors).
type keyringBlock struct {
	ServerToken *string `hcl:"server_token,optional"`
	GCInterval  *string `hcl:"gc_interval,optional"`
	GCThreshold *string `hcl:"gc_threshold,optional"`
}

// applyTo sets in c what the block sets; errors name keyring.<attribute>
// and the file.
func (b *keyringBlock) applyTo(c *agent.KeyringConfig, path string) error {
	if b.ServerToken != nil {
		if *b.ServerToken == "" {
			return fmt.Errorf("keyring.server_token in %s: empty; leave it out for none", path)
		}
		c.ServerToken = *b.ServerToken
	}
	if b.GCInterval != nil {
		v, err := time.ParseDuration(*b.GCInterval)
		if err != nil {
			return fmt.Errorf("keyring.gc_interval in %s: %q is not a duration (10m, 1h)", path, *b.GCInterval)
		}
		if v <= 0 {
			return fmt.Errorf("keyring.gc_interval in %s: %q must be positive", path, *b.GCInterval)
		}
		c.GCInterval = v
	}
	if b.GCThreshold != nil {
		v, err := time.ParseDuration(*b.GCThreshold)
		if err != nil {
			return fmt.Errorf("keyring.gc_threshold in %s: %q is not a duration (1h, 24h)", path, *b.GCThreshold)
		}
		if v == 0 {
			return fmt.Errorf("keyring.gc_threshold in %s: %q is zero; a negative threshold collects inactive keys at any age", path, *b.GCThreshold)
		}
		c.GCThreshold = v
	}
	return nil
}
