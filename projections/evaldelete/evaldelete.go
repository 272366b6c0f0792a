package evaldelete

import (
	"errors"

	"github.com/ordoplane/ordo/projections"
)

// Limits of one page.
const (
	// DefaultPageSize is the page size a delete by filter uses unless
	// told, chosen so that one page's apply stays well under 10 ms on
	// this machine even when raft hands the FSM the pages in flight
	// together (docs/gc.md has the figures).
	DefaultPageSize = 100
	// MaxPageSize bounds a requested page size.
	MaxPageSize = 10000
	// ScanFactor times the page size is the scan limit of a page.
	ScanFactor = 4
	// PagesInFlight is how many pages a delete by filter keeps appended
	// and not yet applied: pages are disjoint ranges, so they need not
	// wait for each other, and raft commits them together.
	PagesInFlight = 4
)

// ErrBadFilter wraps a filter that does not compile.
var ErrBadFilter = errors.New("ordo: bad eval filter")

func init() {
	projections.RegisterExpander("EvalsPageDeleted", expandPage)
	projections.RegisterCheck(OpDeletable, checkDeletable)
}
