package fsm

import (
	"errors"
	"sync"

	"github.com/ordoplane/ordo/projections"
)

// A write is answered from its own apply: the command's proposer names the
// rows its answer shows (ExpectAnswer), and the FSM, on applying the entry
// that carries the command's id, reads them back into the entry's Result
// before any later entry can change them. Reading the store again after
// the apply would show whatever a later write left there.

// RowRef names one projection row.
type RowRef struct {
	Table string
	Key   string
}

// AnsweredRow is a row as the entry that wrote it left it.
type AnsweredRow struct {
	RowRef
	// Found is false when the row did not exist after the entry.
	Found bool
	Row   projections.Row
}

// answers are the rows waited for, by command id. Only this server's own
// proposals are here, so the map is usually empty and the FSM's lookup
// cheap; it changes no state, so apply stays deterministic.
type answers struct {
	mu sync.Mutex
	m  map[string]*answerWait
}

type answerWait struct {
	refs []RowRef
	// waiters counts proposals of this id (idempotent retries share one).
	waiters int
}

// ExpectAnswer asks the FSM to read refs back into the Result of the entry
// that carries commandID, when it applies here; call the returned function
// once the proposal has returned.
func (f *FSM) ExpectAnswer(commandID string, refs []RowRef) (done func()) {
	a := &f.answers
	a.mu.Lock()
	if a.m == nil {
		a.m = map[string]*answerWait{}
	}
	w := a.m[commandID]
	if w == nil {
		w = &answerWait{refs: refs}
		a.m[commandID] = w
	}
	w.waiters++
	a.mu.Unlock()
	return func() {
		a.mu.Lock()
		if w.waiters--; w.waiters == 0 {
			delete(a.m, commandID)
		}
		a.mu.Unlock()
	}
}

// wanted returns the rows commandID's answer needs, if any.
func (a *answers) wanted(commandID string) []RowRef {
	a.mu.Lock()
	defer a.mu.Unlock()
	if w := a.m[commandID]; w != nil {
		return w.refs
	}
	return nil
}

// readAnswer reads refs as tx left them, copying what the batch holds.
func readAnswer(tx *projections.Tx, refs []RowRef) ([]AnsweredRow, error) {
	out := make([]AnsweredRow, 0, len(refs))
	for _, ref := range refs {
		r, err := tx.View.Get(ref.Table, ref.Key)
		switch {
		case errors.Is(err, projections.ErrNotFound):
			out = append(out, AnsweredRow{RowRef: ref})
		case err != nil:
			return nil, err
		default:
			r.Value = append([]byte(nil), r.Value...)
			out = append(out, AnsweredRow{RowRef: ref, Found: true, Row: r})
		}
	}
	return out, nil
}
