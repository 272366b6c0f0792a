package commandstest

import (
	"fmt"
	"testing"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/projections/fsm"
	pt "github.com/ordoplane/ordo/projections/projectionstest"
)

// ApplyDecision applies dec through f as entry index (command id
// "c<index>", stamped as projectionstest.Entry stamps it) with dec's
// preconditions, as a server commits a decision, and returns the result.
func ApplyDecision(tb testing.TB, f *fsm.FSM, index uint64, dec commands.Decision) fsm.Result {
	tb.Helper()
	e := pt.Entry(tb, fmt.Sprintf("c%d", index), dec.Events...)
	e.Preconditions = dec.Preconditions
	return pt.ApplyOne(tb, f, index, e)
}
