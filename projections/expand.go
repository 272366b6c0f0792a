package projections

import (
	"fmt"
	"sync"

	"github.com/ordoplane/ordo/events"
)

// Expand completes, at apply, an event whose content depends on the state
// the entry applies to: it returns the payload to archive and apply in
// place of p. It runs on every server against the state before the event
// (every table, in the order entries commit), so it must be
// deterministic: it reads only v, the entry's leader time (Unix ns) and p.
// An expander may refuse the entry by returning a reason (the entry is
// then recorded as rejected, like a failed precondition).
//
// Expansion is how an entry carries an intent whose result only the state
// can say — "delete the page of evals this filter selects after this
// token" (N4) — while the archive still records exactly what changed:
// a rebuild replays the expanded event and never needs the tables the
// expander read.
type Expand func(v View, time int64, p events.Payload) (out events.Payload, reject string, err error)

var expanders struct {
	sync.RWMutex
	m map[string]Expand
}

// RegisterExpander makes x complete every event of type typ before it is
// archived. Projection packages call it from init; it panics on a
// duplicate.
func RegisterExpander(typ string, x Expand) {
	expanders.Lock()
	defer expanders.Unlock()
	if expanders.m == nil {
		expanders.m = map[string]Expand{}
	}
	if _, dup := expanders.m[typ]; dup {
		panic(fmt.Sprintf("projections: duplicate expander for %q", typ))
	}
	expanders.m[typ] = x
}

// RegisteredExpander returns the expander registered for events of type
// typ: the FSM completes them with it.
func RegisteredExpander(typ string) (Expand, bool) {
	expanders.RLock()
	defer expanders.RUnlock()
	x, ok := expanders.m[typ]
	return x, ok
}
