package timetravel

import (
	"errors"
	"fmt"
)

// ErrBeyondApplied is returned for an index this server has not applied.
var ErrBeyondApplied = errors.New("ordo: index is beyond the applied index")

// ErrClosed is returned by reads after Close.
var ErrClosed = errors.New("ordo: time travel is closed")

// NotServedError is a read at an index the server does not serve: not
// yet (the versions store is being backfilled, or has not caught up with
// the applied index), or not at all (pruned by VersionsKept, before the
// history it holds, or no versions kept). The HTTP API answers 503 to the
// first kind (Retryable) and 400 to the second, naming at_index or
// at_time.
type NotServedError struct {
	// Index is the index asked for.
	Index uint64
	// Oldest is the oldest index served, 0 when none is.
	Oldest uint64
	// Indexing says the index will be served once the backfill (or the
	// writer) reaches it: ask again later.
	Indexing bool
	// Reason says why, for a person.
	Reason string
}

func (e *NotServedError) Error() string {
	if e.Oldest > 0 && !e.Indexing {
		return fmt.Sprintf("index %d is not served: %s; the oldest index served is %d", e.Index, e.Reason, e.Oldest)
	}
	return fmt.Sprintf("index %d is not served: %s", e.Index, e.Reason)
}

// Retryable reports whether the index will be served later.
func (e *NotServedError) Retryable() bool { return e.Indexing }
