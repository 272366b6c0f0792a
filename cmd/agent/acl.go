package agent

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/ordoplane/ordo/commands/acl"
	"github.com/ordoplane/ordo/commands/httpapi"
	"github.com/ordoplane/ordo/processors/tokenexpiry"
)

// ACLConfig is the agent file's acl block (Nomad's names); ACLs are off
// unless Enabled, and off in plain -dev.
type ACLConfig struct {
	// Enabled turns on enforcement on every endpoint.
	Enabled bool `json:"Enabled"`
	// TokenTTL bounds how long a resolved token is cached; default 30s.
	TokenTTL time.Duration `json:"TokenTTL"`
	// PolicyTTL and RoleTTL are accepted for Nomad compatibility; the
	// cache is invalidated by the tables' indexes and bounded by TokenTTL.
	PolicyTTL time.Duration `json:"PolicyTTL"`
	RoleTTL   time.Duration `json:"RoleTTL"`
	// TokenMinExpirationTTL and TokenMaxExpirationTTL bound the TTL of
	// expiring tokens; default 1m and 24h as Nomad.
	TokenMinExpirationTTL time.Duration `json:"TokenMinExpirationTTL"`
	TokenMaxExpirationTTL time.Duration `json:"TokenMaxExpirationTTL"`
	// ExpiryInterval is how often the leader deletes expired tokens; default 5s.
	ExpiryInterval time.Duration `json:"ExpiryInterval"`
	// WorkloadIdentity verifies workload identity JWTs (the keyring's);
	// nil: none are accepted.
	WorkloadIdentity acl.WorkloadIdentityVerifier `json:"-"`
}

func (c *ACLConfig) defaults() {
	if c.TokenTTL <= 0 {
		c.TokenTTL = 30 * time.Second
	}
	if c.TokenMinExpirationTTL <= 0 {
		c.TokenMinExpirationTTL = time.Minute
	}
	if c.TokenMaxExpirationTTL <= 0 {
		c.TokenMaxExpirationTTL = 24 * time.Hour
	}
}

// Validate reports an ACL block that cannot work.
func (c ACLConfig) Validate() error {
	for name, d := range map[string]time.Duration{"token_ttl": c.TokenTTL, "policy_ttl": c.PolicyTTL, "role_ttl": c.RoleTTL,
		"token_min_expiration_ttl": c.TokenMinExpirationTTL, "token_max_expiration_ttl": c.TokenMaxExpirationTTL} {
		if d < 0 {
			return fmt.Errorf("acl.%s: %v must not be negative", name, d)
		}
	}
	if c.TokenMaxExpirationTTL > 0 && c.TokenMinExpirationTTL > c.TokenMaxExpirationTTL {
		return fmt.Errorf("acl.token_min_expiration_ttl: %v exceeds token_max_expiration_ttl %v", c.TokenMinExpirationTTL, c.TokenMaxExpirationTTL)
	}
	return nil
}

// ACLResetFile is the file in the data dir an operator writes a bootstrap
// reset index to, to bootstrap ACLs again (as Nomad's acl-bootstrap-reset).
const ACLResetFile = "acl-bootstrap-reset"

// resetIndex reads the reset index from the data dir; 0 when no file.
func (a *Agent) resetIndex() (uint64, error) {
	b, err := os.ReadFile(filepath.Join(a.cfg.DataDir, ACLResetFile))
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	} else if err != nil {
		return 0, fmt.Errorf("read %s: %w", ACLResetFile, err)
	}
	n, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: %q is not an index: %w", ACLResetFile, strings.TrimSpace(string(b)), err)
	}
	return n, nil
}

// newACL builds the API's ACL options and the token expiry processor when
// ACLs are enabled (nil, nil otherwise).
func (a *Agent) newACL() (*httpapi.ACLOptions, *tokenexpiry.Processor, error) {
	if !a.cfg.ACL.Enabled {
		return nil, nil, nil
	}
	a.cfg.ACL.defaults()
	res, err := acl.NewResolver(acl.ResolverConfig{Store: a.store, Applied: a.fsm.Applied,
		Verifier: a.cfg.ACL.WorkloadIdentity, MaxAge: a.cfg.ACL.TokenTTL, Logger: a.log, Registerer: a.reg})
	if err != nil {
		return nil, nil, err
	}
	exp, err := tokenexpiry.New(tokenexpiry.Config{Pipeline: a.pipeline, Interval: a.cfg.ACL.ExpiryInterval,
		Logger: a.log, Registerer: a.reg})
	if err != nil {
		return nil, nil, err
	}
	return &httpapi.ACLOptions{Resolver: res, ResetIndex: a.resetIndex,
		MinTokenTTL: a.cfg.ACL.TokenMinExpirationTTL, MaxTokenTTL: a.cfg.ACL.TokenMaxExpirationTTL}, exp, nil
}
