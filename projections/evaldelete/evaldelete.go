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
	// EvalsInFlight bounds the evals of the pages a delete by filter keeps
	// in flight by default (DefaultInFlight): raft commits the pages in
	// flight together and each server applies them in one batch, so the
	// batch's apply grows with pages × page size. 400 is the default
	// 4 pages of 100, about 2 ms of apply on one idle FSM.
	EvalsInFlight = PagesInFlight * DefaultPageSize
)

// DefaultInFlight is how many pages of pageSize evals a delete by filter
// keeps in flight unless told: PagesInFlight, fewer for pages so large
// that their evals would pass EvalsInFlight (at least one).
func DefaultInFlight(pageSize int) int {
	if pageSize <= 0 {
		return PagesInFlight
	}
	return max(1, min(PagesInFlight, EvalsInFlight/pageSize))
}

// ErrBadFilter wraps a filter that does not compile.
var ErrBadFilter = errors.New("ordo: bad eval filter")

func init() {
	projections.RegisterExpander("EvalsPageDeleted", expandPage)
	projections.RegisterCheck(OpDeletable, checkDeletable)
}
