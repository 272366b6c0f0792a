package evaldelete

import (
	"errors"
	"fmt"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/evals"
	"github.com/ordoplane/ordo/projections/order"
)

// Page is the outcome of Walk.
type Page struct {
	// IDs are the evals the page deletes, in creation order.
	IDs []string
	// Deleted holds, for each of IDs, the eval's job and create index.
	Deleted []events.DeletedEval
	// Selected counts the evals the filter selected (deleted or skipped).
	Selected int
	// Skipped counts selected evals that were not safe to delete.
	Skipped int
	// Scanned counts the evals looked at.
	Scanned int
	// First is the creation key of the first selected eval, "" when none
	// was: where a page that starts at a selected eval starts.
	First string
	// Next is the creation key of the first eval the walk did not look
	// at: the walk's to when it reached it, "" at the end of the table.
	Next string
}

// errStop ends a walk.
var errStop = errors.New("stop")

// Walk re-creates one page: it looks at the evals in creation order from
// the creation key from ("" for the oldest) up to, not including, the
// creation key to ("" for no bound), keeps those f selects, and stops
// once pageSize were selected or scanLimit were looked at (0: no limit).
// With check set, selected evals that are not Safe are skipped; without,
// every selected eval is in IDs (a handler's plan).
//
// It reads the creation index in chunks of as many keys as the page may
// still select, and the evals of each chunk together (readEvals): the
// page is the same as reading eval by eval.
func Walk(v projections.View, f *Filter, from, to string, pageSize, scanLimit int, check bool) (Page, error) {
	var p Page
	if pageSize <= 0 {
		return p, fmt.Errorf("evaldelete: page size %d", pageSize)
	}
	var selected []*events.Evaluation
	var creates []uint64 // the create index of each of selected
	full := func() bool { return p.Selected >= pageSize || (scanLimit > 0 && p.Scanned >= scanLimit) }
	cur, done := from, false
	for !done {
		need := pageSize - p.Selected
		if scanLimit > 0 {
			need = min(need, scanLimit-p.Scanned)
		}
		// One key past the chunk tells where the page ends if it fills.
		keys, err := creationKeys(v, cur, to, need+1)
		if err != nil {
			return Page{}, err
		}
		chunk, err := readEvals(v, f, keys[:min(need, len(keys))])
		if err != nil {
			return Page{}, err
		}
		done = len(keys) <= need // the range ends within this chunk
		for i, key := range keys {
			if full() {
				p.Next, done = key, true
				break
			}
			if i == need {
				cur = key // not read yet: the next chunk starts here
				break
			}
			p.Scanned++
			e := chunk[i]
			if e == nil {
				continue
			}
			ok, err := Match(f, e)
			if err != nil {
				return Page{}, err
			}
			if !ok {
				continue
			}
			create, _, err := order.Split(key)
			if err != nil {
				return Page{}, fmt.Errorf("evaldelete: %w", err)
			}
			p.Selected++
			if p.First == "" {
				p.First = key
			}
			selected = append(selected, e)
			creates = append(creates, create)
		}
	}
	if p.Next == "" && to != "" {
		p.Next = to // the walk reached to, or the table ended before it
	}
	safe := make([]bool, len(selected))
	if check {
		var err error
		if safe, err = NewSafety(v).SafeAll(selected); err != nil {
			return Page{}, err
		}
	}
	for i, e := range selected {
		if check && !safe[i] {
			p.Skipped++
			continue
		}
		p.IDs = append(p.IDs, e.ID)
		p.Deleted = append(p.Deleted, events.DeletedEval{Namespace: e.Namespace, JobID: e.JobID, CreateIndex: creates[i]})
	}
	return p, nil
}

// keyID returns the eval id of a creation key (projections/order.Key:
// 20 digits, a zero byte, the id).
func keyID(key string) (string, error) {
	if len(key) < 22 || key[20] != 0 {
		return "", fmt.Errorf("evaldelete: malformed creation key %q", key)
	}
	return key[21:], nil
}

// expandPage completes an EvalsPageDeleted at apply (N4): the page its
// filter, range, size and scan limit select in the state before the
// entry, safe evals only (N6). A filter that no longer compiles (it
// compiled when the command was decided) refuses the entry.
func expandPage(v projections.View, _ int64, pl events.Payload) (events.Payload, string, error) {
	p, ok := pl.(*events.EvalsPageDeleted)
	if !ok {
		return nil, "", fmt.Errorf("evaldelete: expander got a %T", pl)
	}
	f, err := Compile(p.Filter)
	if err != nil {
		return nil, err.Error(), nil
	}
	page, err := Walk(v, f, p.From, p.To, p.PageSize, p.ScanLimit, true)
	if errors.Is(err, ErrBadFilter) {
		return nil, err.Error(), nil
	} else if err != nil {
		return nil, "", err
	}
	out := *p
	out.IDs, out.Deleted, out.Skipped, out.Next = page.IDs, page.Deleted, page.Skipped, page.Next
	return &out, "", nil
}

// SpanEnd returns where a page of n evals that starts at the creation
// key from ends: the creation key of the n+1th eval at or after from, or
// to ("" for the end of the table) when fewer than n+1 lie before it. It
// reads index keys only, never an eval: a handler plans a page by
// finding its first selected eval with Walk and its end with SpanEnd.
func SpanEnd(v projections.View, from, to string, n int) (string, error) {
	seen, end := 0, to
	err := v.ScanFrom(evals.ByCreateTable, "", from, false, func(key string, _ projections.Row) error {
		if to != "" && key >= to {
			return errStop
		}
		if seen == n {
			end = key
			return errStop
		}
		seen++
		return nil
	})
	if err != nil && !errors.Is(err, errStop) {
		return "", fmt.Errorf("evaldelete: end of the page at %q: %w", from, err)
	}
	return end, nil
}
