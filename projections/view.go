package projections

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/ordoplane/ordo/projections/internal/layout"
	"github.com/ordoplane/ordo/storage/kv"
)

// View reads projections through a kv.Reader: a snapshot for handlers, the
// FSM's batch during apply.
type View struct {
	r kv.Reader
}

// NewView returns a View over r.
func NewView(r kv.Reader) View { return View{r: r} }

// Reader returns the underlying reader, for the archive.
func (v View) Reader() kv.Reader { return v.r }

// Get returns the row at key in table, or ErrNotFound.
func (v View) Get(table, key string) (Row, error) {
	return v.getKey(layout.RowKey(table, key), table, key)
}

// getKey is Get of the row at k, rowKey(table, key).
func (v View) getKey(k []byte, table, key string) (Row, error) {
	b, err := v.r.Get(k)
	if errors.Is(err, kv.ErrNotFound) {
		return Row{}, ErrNotFound
	}
	if err != nil {
		return Row{}, fmt.Errorf("get %s/%s: %w", table, key, err)
	}
	return decodeRow(b)
}

// Scan calls fn for each row of table whose key starts with prefix, in key
// order (reverse when reverse is set). fn may return kv.ErrStop.
func (v View) Scan(table, prefix string, reverse bool, fn func(key string, r Row) error) error {
	tp := layout.TablePrefix(table)
	lower := layout.RowKey(table, prefix)
	return v.r.Scan(lower, kv.PrefixEnd(lower), reverse, func(k, b []byte) error {
		r, err := decodeRow(b)
		if err != nil {
			return err
		}
		return fn(string(k[len(tp):]), r)
	})
}

// TableIndex returns the index of the last entry that changed table.
func (v View) TableIndex(table string) (uint64, error) { return v.uint(layout.TableIndexKey(table)) }

// AppliedIndex returns the index of the last entry applied.
func (v View) AppliedIndex() (uint64, error) { return v.uint(layout.AppliedKey) }

// RestoredIndex returns the raft index of the last operator restore the
// state holds (FSM.RestoredAt as of this view), 0 when none. Every table
// was replaced at that index, so a blocking query reports no index below
// it: a caller that saw the state before the restore is woken by it.
func (v View) RestoredIndex() (uint64, error) { return v.uint(layout.RestoredKey) }

func (v View) uint(key []byte) (uint64, error) {
	b, err := v.r.Get(key)
	if errors.Is(err, kv.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", key, err)
	}
	return kv.ParseUint64(b), nil
}

// ScanFrom is Scan starting at from: it calls fn for each row of table
// whose key starts with prefix and is at or after from in key order (at or
// before it when reverse is set). An empty from starts at the first (last)
// row, as Scan does. As with Scan, a row's Value is valid only until fn
// returns: copy it to keep it.
func (v View) ScanFrom(table, prefix, from string, reverse bool, fn func(key string, r Row) error) error {
	if from == "" {
		return v.Scan(table, prefix, reverse, fn)
	}
	tp := layout.TablePrefix(table)
	lower := layout.RowKey(table, prefix)
	upper := kv.PrefixEnd(lower)
	start := layout.RowKey(table, from)
	if reverse {
		// Keys at or before from: below from's immediate successor.
		if succ := append(start, 0); bytes.Compare(succ, upper) < 0 {
			upper = succ
		}
	} else if bytes.Compare(start, lower) > 0 {
		lower = start
	}
	if bytes.Compare(lower, upper) >= 0 {
		return nil
	}
	return v.r.Scan(lower, upper, reverse, func(k, b []byte) error {
		r, err := decodeRow(b)
		if err != nil {
			return err
		}
		return fn(string(k[len(tp):]), r)
	})
}
