package eval

import (
	"fmt"
	"sort"
	"time"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/evaldelete"
	"github.com/ordoplane/ordo/projections/evals"
	"github.com/ordoplane/ordo/storage/archive"
	"github.com/ordoplane/ordo/storage/kv"
)

// MaxDeleteIDs bounds the evals one delete by id names.
const MaxDeleteIDs = 10000

// Delete deletes the evals IDs names. Whether each may go (its job gone,
// stopped or dead, or its allocs terminal; N6) is decided at apply by an
// evaldelete.OpDeletable precondition per eval: a single unsafe or missing
// eval refuses the whole entry (409).
type Delete struct {
	IDs []string
}

var _ commands.Command = Delete{}

// Validate implements commands.Command.
func (d Delete) Validate() error {
	if len(d.IDs) == 0 {
		return commands.Invalid("EvalIDs", "at least one eval id is required")
	}
	if len(d.IDs) > MaxDeleteIDs {
		return commands.Invalid("EvalIDs", "at most %d ids, got %d", MaxDeleteIDs, len(d.IDs))
	}
	seen := map[string]bool{}
	for i, id := range d.IDs {
		if id == "" || len(id) > 128 {
			return commands.Invalid("EvalIDs", "id %d is empty or longer than 128 bytes", i)
		}
		if seen[id] {
			return commands.Invalid("EvalIDs", "id %q given twice", id)
		}
		seen[id] = true
	}
	return nil
}

// Decide implements commands.Command.
func (d Delete) Decide(v projections.View, _ time.Time, _ commands.IDs) (commands.Decision, error) {
	ids := append([]string(nil), d.IDs...)
	sort.Strings(ids)
	for _, id := range ids {
		if _, err := evals.Get(v, id); err != nil {
			return commands.Decision{}, &commands.NotFoundError{Kind: "evaluation", ID: id}
		}
	}
	dec := commands.Decision{Events: []events.Payload{&events.EvalsDeleted{IDs: ids}}}
	for _, id := range ids {
		dec.Preconditions = append(dec.Preconditions, events.Precondition{Table: evals.Table, Key: id, Op: evaldelete.OpDeletable})
	}
	return dec, nil
}

// DeletePage deletes one page of the evals Filter selects, starting at the
// creation key From and ending before To ("" for no bound) (N4): the entry
// carries the filter, the range and the page size, and the FSM re-creates
// the page at apply (evaldelete).
type DeletePage struct {
	Filter   string
	From     string
	To       string
	PageSize int
}

var _ commands.Command = DeletePage{}

// Validate implements commands.Command.
func (d DeletePage) Validate() error {
	if d.Filter == "" {
		return commands.Invalid("Filter", "required")
	}
	if _, err := evaldelete.Compile(d.Filter); err != nil {
		return commands.Invalid("Filter", "%v", err)
	}
	if d.To != "" && d.To <= d.From {
		return commands.Invalid("To", "must sort after From")
	}
	if d.PageSize <= 0 || d.PageSize > evaldelete.MaxPageSize {
		return commands.Invalid("PerPage", "must be between 1 and %d, is %d", evaldelete.MaxPageSize, d.PageSize)
	}
	return nil
}

// Decide implements commands.Command.
func (d DeletePage) Decide(_ projections.View, _ time.Time, _ commands.IDs) (commands.Decision, error) {
	return commands.Decision{Events: []events.Payload{&events.EvalsPageDeleted{Filter: d.Filter, From: d.From, To: d.To,
		PageSize: d.PageSize, ScanLimit: d.PageSize * evaldelete.ScanFactor}}}, nil
}

// AppliedPage returns the EvalsPageDeleted the entry at index archived:
// what its page deleted, as completed at apply.
func AppliedPage(r kv.Reader, index uint64) (*events.EvalsPageDeleted, error) {
	b, err := r.Get(archive.Key(index, 0))
	if err != nil {
		return nil, fmt.Errorf("read page entry %d: %w", index, err)
	}
	ev, err := events.DecodeEvent(b)
	if err != nil {
		return nil, fmt.Errorf("decode page entry %d: %w", index, err)
	}
	p, err := events.Decode(ev)
	if err != nil {
		return nil, fmt.Errorf("decode page entry %d: %w", index, err)
	}
	page, ok := p.(*events.EvalsPageDeleted)
	if !ok {
		return nil, fmt.Errorf("entry %d holds a %s, not a page delete", index, ev.Type)
	}
	return page, nil
}
