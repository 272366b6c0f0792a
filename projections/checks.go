package projections

import (
	"fmt"
	"sync"

	"github.com/ordoplane/ordo/events"
)

// Check decides a precondition of an operation a projection package owns
// (beyond Exists, Absent and ModifyIndex): it returns why p does not hold,
// or "" when it does. It runs at apply on every server, so it must be
// deterministic: it reads only v (every table, at the state before the
// entry; for a command of a grouped entry, after the commands before it)
// and p.
type Check func(v View, p events.Precondition) string

var checks struct {
	sync.RWMutex
	m map[events.PreconditionOp]Check
}

// RegisterCheck makes c decide preconditions with operation op. Projection
// packages call it from init, so every FSM that applies their events also
// checks their preconditions; an operation nobody registered is refused at
// apply as unknown. It panics on a duplicate or a built-in operation.
func RegisterCheck(op events.PreconditionOp, c Check) {
	switch op {
	case events.Exists, events.Absent, events.ModifyIndex, "":
		panic(fmt.Sprintf("projections: %q is a built-in precondition operation", op))
	}
	checks.Lock()
	defer checks.Unlock()
	if checks.m == nil {
		checks.m = map[events.PreconditionOp]Check{}
	}
	if _, dup := checks.m[op]; dup {
		panic(fmt.Sprintf("projections: duplicate precondition check %q", op))
	}
	checks.m[op] = c
}

// RegisteredCheck returns the check registered for op: the FSM decides
// preconditions with it.
func RegisteredCheck(op events.PreconditionOp) (Check, bool) {
	checks.RLock()
	defer checks.RUnlock()
	c, ok := checks.m[op]
	return c, ok
}
