package capacity

import (
	"errors"
	"fmt"
	"github.com/ordoplane/ordo/clock"
	"github.com/ordoplane/ordo/processors/defaults"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ordoplane/ordo/processors/follow"
)

// RequestorPrefix starts the requestor of every node request this
// processor files; the pool's name follows ("capacity:batch").
const RequestorPrefix = "capacity:"

// Requestor returns the requestor of pool's requests.
func Requestor(pool string) string { return RequestorPrefix + pool }

// Defaults of Pool and Config.
const (
	DefaultMaxRequests    = 10
	DefaultIdleTimeout    = 10 * time.Minute
	DefaultFailureBackoff = time.Minute
)

// Pool maps a node pool to the launcher label that adds capacity to it.
type Pool struct {
	// Name is the node pool ("default" for jobs naming none).
	Name string
	// Label is the launcher label requested for it; required.
	Label string
	// Tenant, if set, is the tenant of the requests (P13 limits).
	Tenant string
	// MaxRequests bounds the pool's open and fulfilled requests; default
	// DefaultMaxRequests.
	MaxRequests int
	// IdleTimeout is how long a launched node may go without allocations
	// (or an instance without a registered node) before it is returned;
	// default DefaultIdleTimeout.
	IdleTimeout time.Duration
}

// Config configures the processor.
type Config struct {
	// Pipeline receives the processor's commands; required.
	Pipeline follow.Submitter
	// State is read and followed; required.
	State follow.State
	// Pools are the mapped node pools; required, at least one.
	Pools []Pool
	// Clock times idle nodes; default clock.System.
	Clock clock.Clock
	// FailureBackoff is how long a pool files no request after one of
	// its requests failed; default DefaultFailureBackoff.
	FailureBackoff time.Duration
	// Logger; default slog.Default().
	Logger *slog.Logger
	// Registerer receives the metrics; nil registers none.
	Registerer prometheus.Registerer
}

// DefaultConfig returns the defaults, without the required fields (a
// Pool's own zero fields take DefaultMaxRequests and DefaultIdleTimeout).
func DefaultConfig() Config {
	return Config{Clock: clock.System{}, FailureBackoff: DefaultFailureBackoff, Logger: slog.Default()}
}

// withDefaults returns c with its zero fields set to their defaults.
func (c Config) withDefaults() Config {
	defaults.Fill(&c, DefaultConfig())
	pools := make([]Pool, len(c.Pools))
	for i, p := range c.Pools {
		if p.MaxRequests == 0 {
			p.MaxRequests = DefaultMaxRequests
		}
		if p.IdleTimeout == 0 {
			p.IdleTimeout = DefaultIdleTimeout
		}
		pools[i] = p
	}
	c.Pools = pools
	return c
}

// Validate reports a Config that cannot work.
func (c Config) Validate() error {
	if err := follow.Validate("capacity", c.Pipeline, c.State, 0); err != nil {
		return err
	}
	switch {
	case len(c.Pools) == 0:
		return errors.New("capacity: Pools is required")
	case c.FailureBackoff < 0:
		return errors.New("capacity: FailureBackoff must not be negative")
	}
	return ValidatePools(c.Pools)
}

// ValidatePools reports a pool mapping that cannot work: a pool without
// a name or a label, mapped twice, or with negative bounds.
func ValidatePools(pools []Pool) error {
	seen := map[string]bool{}
	for _, p := range pools {
		switch {
		case p.Name == "":
			return errors.New("capacity: a pool needs a name")
		case seen[p.Name]:
			return fmt.Errorf("capacity: pool %q mapped twice", p.Name)
		case p.Label == "":
			return fmt.Errorf("capacity: pool %q: label is required", p.Name)
		case p.MaxRequests < 0:
			return fmt.Errorf("capacity: pool %q: max_requests must not be negative", p.Name)
		case p.IdleTimeout < 0:
			return fmt.Errorf("capacity: pool %q: idle_timeout must not be negative", p.Name)
		}
		seen[p.Name] = true
	}
	return nil
}
