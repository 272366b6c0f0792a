package rebuild

import (
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/internal/layout"
	"github.com/ordoplane/ordo/storage/kv"
)

// SetFreshRowsLimit sets how many bytes of rows a rebuild keeps in memory
// and returns a function restoring the default.
func SetFreshRowsLimit(n int) func() {
	old := freshRowsLimit
	freshRowsLimit = n
	return func() { freshRowsLimit = old }
}

// SetBatchEntries sets how many entries a rebuild commits per batch and
// returns a function restoring the default.
func SetBatchEntries(n uint64) func() {
	old := rebuildBatchEntries
	rebuildBatchEntries = n
	return func() { rebuildBatchEntries = old }
}

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

// PutRow writes r at key in table directly, bypassing the projections.
func PutRow(w kv.Writer, table, key string, r projections.Row) error {
	return w.Set(layout.RowKey(table, key), layout.EncodeRow(r.CreateIndex, r.ModifyIndex, r.Value))
}

// SetTableIndex writes table's index directly.
func SetTableIndex(w kv.Writer, table string, index uint64) error {
	return w.Set(layout.TableIndexKey(table), kv.Uint64Value(index))
}
