package timetravel

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/storage/archive"
	"github.com/ordoplane/ordo/storage/kv"
)

// resolveSkew and resolveWindow bound the forward look after the binary
// search: see ResolveTime.
const (
	resolveSkew   = time.Second
	resolveWindow = 1024
)

// ResolveTime returns the last applied index whose entry's leader time is
// at or before t; ok is false when the first entry is already after t.
//
// Only entries that appended events are in the archive; an entry that was
// rejected (a failed precondition) or a retried command changed no
// projection, so the state at such an index equals the state at the last
// archived index before it, which is what ResolveTime returns.
//
// Leader times are taken when a command is decided, before raft orders
// it, so two commands decided at nearly the same moment can commit in the
// opposite order, and a new leader's clock may differ from the last one's.
// ResolveTime binary-searches the archive by index as if times never went
// backwards (about log2(applied) point reads), then looks forward past the
// answer for up to resolveWindow events while their times are within
// resolveSkew of t, taking the last one at or before t.
func (t *TimeTravel) ResolveTime(at time.Time) (index uint64, ok bool, err error) {
	return resolveTime(t.cfg.FSM.Store(), t.cfg.FSM.Applied(), at.UnixNano())
}

func resolveTime(r kv.Reader, applied uint64, at int64) (uint64, bool, error) {
	// Invariant: the newest archived entry at or below lo is at or before
	// at (or there is none); everything above hi is after it.
	lo, hi := uint64(0), applied
	for lo < hi {
		mid := lo + (hi-lo+1)/2
		_, tm, found, err := archivedAtOrBelow(r, mid)
		if err != nil {
			return 0, false, err
		}
		if !found || tm <= at {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	idx, _, found, err := archivedAtOrBelow(r, lo)
	if err != nil {
		return 0, false, err
	}
	if !found {
		idx = 0
	}
	// Look past the boundary for entries that committed later but were
	// decided before at.
	seen := 0
	err = archive.Scan(r, idx+1, applied, func(index uint64, seq uint32, data []byte) error {
		if seq != 0 {
			return nil
		}
		ev, err := events.DecodeEvent(data)
		if err != nil {
			return fmt.Errorf("archive %d: %w", index, err)
		}
		if ev.Time > at+int64(resolveSkew) {
			return kv.ErrStop
		}
		if ev.Time <= at {
			idx = index
		}
		if seen++; seen == resolveWindow {
			return kv.ErrStop
		}
		return nil
	})
	if err != nil {
		return 0, false, err
	}
	return idx, idx > 0, nil
}

// archivedAtOrBelow returns the newest archived entry at or below index
// and its leader time.
func archivedAtOrBelow(r kv.Reader, index uint64) (idx uint64, at int64, found bool, err error) {
	if index == 0 {
		return 0, 0, false, nil
	}
	lower := archive.Key(0, 0)
	upper := archive.Key(index+1, 0)
	if index == ^uint64(0) {
		upper = kv.PrefixEnd(lower[:len(lower)-12])
	}
	err = r.Scan(lower, upper, true, func(k, v []byte) error {
		ev, err := events.DecodeEvent(v)
		if err != nil {
			return fmt.Errorf("archive %x: %w", k, err)
		}
		idx, at, found = binary.BigEndian.Uint64(k[len(k)-12:]), ev.Time, true
		return kv.ErrStop
	})
	return idx, at, found, err
}
