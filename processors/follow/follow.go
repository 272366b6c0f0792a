// Package follow holds what every leader-only processor that follows the
// state and acts through commands is given: somewhere to submit commands,
// the state it reads (with the notifier that wakes it), and a clock.
//
// # Usage
//
// A processor's Config takes a Submitter (*commands.Pipeline), a State
// (*fsm.FSM) and a clock.Clock (clock.System unless a test passes
// one; clocktest.Clock moves only when told). Its Validate calls
// follow.Validate for the fields every follower shares.
package follow

import (
	"context"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/fsm"
	"github.com/ordoplane/ordo/storage/kv"
)

// Submitter runs commands; *commands.Pipeline implements it.
type Submitter interface {
	Run(ctx context.Context, name string, req commands.Request, c commands.Command) (commands.Outcome, error)
}

var _ Submitter = (*commands.Pipeline)(nil)

// State is where a processor reads the projections, and what wakes it when
// they change; *fsm.FSM implements it. It is read-only: a processor
// changes state only by submitting commands.
type State interface {
	// ReadSnapshot opens a point-in-time, read-only view of the state
	// (projections.NewView reads it); the caller closes it.
	ReadSnapshot() *kv.Snapshot
	// Notifier wakes the processor when the state changes.
	Notifier() *projections.Notifier
}

var _ State = (*fsm.FSM)(nil)
