package projections

import (
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/storage/kv"
)

// PutRow writes r at key in table directly, bypassing the projections, so
// tests can corrupt a store and check that Checksum notices.
func PutRow(w kv.Writer, table, key string, r Row) error {
	return w.Set(rowKey(table, key), encodeRow(r))
}

// SetTableIndex writes table's index directly.
func SetTableIndex(w kv.Writer, table string, index uint64) error {
	return w.Set(tableIndexKey(table), kv.Uint64Value(index))
}

// SetRebuildHook makes r call hook with every progress report, before it
// records it.
func SetRebuildHook(r *Rebuilder, hook func(RebuildProgress)) { r.hook = hook }

// SetFreshRowsLimit sets how many bytes of rows a rebuild keeps in memory
// and returns a function restoring the default.
func SetFreshRowsLimit(n int) func() {
	old := freshRowsLimit
	freshRowsLimit = n
	return func() { freshRowsLimit = old }
}

// ApplyEvent applies ev to p as the entry at index would, writing into w.
func ApplyEvent(w kv.Writer, p Projection, ev *events.Event, index uint64) error {
	return p.Apply(newTx(w, index, 0), ev)
}

// SetPreparedHook makes f's online rebuilds call fn once the switch's table
// file is written, before they catch up for the last time.
func SetPreparedHook(f *FSM, fn func()) { f.prepared = fn }

// BusyFunc returns the test a job of r would use of whether the server
// applies entries.
func BusyFunc(r *Rebuilder) func() bool { return r.busy() }

// ScratchDirOf returns where r's verifies put their scratch stores.
func ScratchDirOf(r *Rebuilder) string { return r.cfg.ScratchDir }

// SetRowLogBudget sets the bytes a rebuild's row logs may hold and
// returns a function restoring the default.
func SetRowLogBudget(n int64) func() {
	old := rowLogBudget
	rowLogBudget = n
	return func() { rowLogBudget = old }
}

// SetRowArenaBudget sets the bytes a rebuild's row arenas may hold and
// returns a function restoring the default.
func SetRowArenaBudget(n int64) func() {
	old := rowArenaBudget
	rowArenaBudget = n
	return func() { rowArenaBudget = old }
}
