// Package follow holds what every leader-only processor that follows the
// state and acts through commands is given: somewhere to submit commands,
// the state it reads (with the notifier that wakes it), and a clock.
//
// # Usage
//
// A processor's Config takes a Submitter (*commands.Pipeline), a State
// (*projections.FSM) and a Clock (SystemClock unless a test passes one;
// followtest.Clock moves only when told).
package follow

import (
	"context"
	"time"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/storage/kv"
)

// Submitter runs commands; *commands.Pipeline implements it.
type Submitter interface {
	Run(ctx context.Context, name string, req commands.Request, c commands.Command) (commands.Outcome, error)
}

var _ Submitter = (*commands.Pipeline)(nil)

// State is where a processor reads the projections, and what wakes it when
// they change; *projections.FSM implements it.
type State interface {
	Store() *kv.Store
	Notifier() *projections.Notifier
}

var _ State = (*projections.FSM)(nil)

// Clock tells the time and waits: a processor's only source of time.
type Clock interface {
	Now() time.Time
	After(d time.Duration) <-chan time.Time
}

// SystemClock is the real clock.
type SystemClock struct{}

var _ Clock = SystemClock{}

// Now implements Clock.
func (SystemClock) Now() time.Time { return time.Now() }

// After implements Clock.
func (SystemClock) After(d time.Duration) <-chan time.Time { return time.After(d) }
