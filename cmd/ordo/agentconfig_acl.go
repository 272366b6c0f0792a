package main

import (
	"fmt"
	"time"

	"github.com/ordoplane/ordo/cmd/agent"
)

// aclBlock is the agent file's acl block, with Nomad's names:
//
//	acl {
//	  enabled                  = true
//	  token_ttl                = "30s"   # how long a resolved token is cached
//	  policy_ttl               = "30s"   # accepted; the cache follows the ACL tables
//	  role_ttl                 = "30s"   # accepted; likewise
//	  token_min_expiration_ttl = "1m"
//	  token_max_expiration_ttl = "24h"
//	}
//
// An attribute left out keeps its default.
type aclBlock struct {
	Enabled               *bool   `hcl:"enabled,optional"`
	TokenTTL              *string `hcl:"token_ttl,optional"`
	PolicyTTL             *string `hcl:"policy_ttl,optional"`
	RoleTTL               *string `hcl:"role_ttl,optional"`
	TokenMinExpirationTTL *string `hcl:"token_min_expiration_ttl,optional"`
	TokenMaxExpirationTTL *string `hcl:"token_max_expiration_ttl,optional"`
}

// applyTo sets in c what the block sets; errors name acl.<attribute> and
// the file.
func (b *aclBlock) applyTo(c *agent.ACLConfig, path string) error {
	if b.Enabled != nil {
		c.Enabled = *b.Enabled
	}
	for _, d := range []struct {
		name string
		src  *string
		dst  *time.Duration
	}{
		{"token_ttl", b.TokenTTL, &c.TokenTTL}, {"policy_ttl", b.PolicyTTL, &c.PolicyTTL}, {"role_ttl", b.RoleTTL, &c.RoleTTL},
		{"token_min_expiration_ttl", b.TokenMinExpirationTTL, &c.TokenMinExpirationTTL},
		{"token_max_expiration_ttl", b.TokenMaxExpirationTTL, &c.TokenMaxExpirationTTL},
	} {
		if d.src == nil {
			continue
		}
		v, err := time.ParseDuration(*d.src)
		if err != nil {
			return fmt.Errorf("acl.%s in %s: %q is not a duration (30s, 1m)", d.name, path, *d.src)
		}
		if v <= 0 {
			return fmt.Errorf("acl.%s in %s: %q must be positive", d.name, path, *d.src)
		}
		*d.dst = v
	}
	if err := c.Validate(); err != nil {
		return fmt.Errorf("%w (in %s)", err, path)
	}
	return nil
}
