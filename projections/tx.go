package projections

import (
	"errors"
	"fmt"
	"iter"
	"maps"
	"sort"

	"github.com/ordoplane/ordo/projections/internal/layout"
	"github.com/ordoplane/ordo/storage/kv"
)

// Tx is what a projection writes through while one entry is applied. It
// stamps rows with the entry's index and remembers which tables changed.
type Tx struct {
	View
	w       kv.Writer
	index   uint64
	time    int64
	changed map[string]struct{}
	// keys are the changed keys of key-watched tables (WatchKeys), as
	// KeyTopic names.
	keys map[string]struct{}
	// last is the row Get read or Put wrote last: Put keeps a row's
	// create index, and a projection mostly writes the row it just read.
	last lastRow
	// keyBuf is where the Tx lays out the key of the row it reads or
	// writes (key).
	keyBuf []byte
	// idxRow is the value of the entry's index rows (indexRow).
	idxRow []byte
	// quiet: nobody waits on the keys changed (a replay's Tx), so they
	// are not gathered as topics.
	quiet bool
}

// lastRow is the create index of a row a Tx read or wrote last (found
// false: the row is absent).
type lastRow struct {
	table, key string
	create     uint64
	found      bool
	valid      bool
}

// NewTx returns the Tx of the entry at index, whose leader time is time
// (Unix nanoseconds), writing through w. The FSM makes one for each entry
// it applies; a projection is handed its Tx and never makes one.
func NewTx(w kv.Writer, index uint64, time int64) *Tx {
	return &Tx{View: View{r: w}, w: w, index: index, time: time, changed: map[string]struct{}{}}
}

// NewReplayTx is NewTx for a replay of the archive (a rebuild), which
// nobody waits on: it gathers no changed keys for the Notifier.
func NewReplayTx(w kv.Writer, index uint64, time int64) *Tx {
	tx := NewTx(w, index, time)
	tx.quiet = true
	return tx
}

// Reset makes tx the Tx of the next entry, keeping its maps: a replay
// reuses one Tx for entry after entry.
func (tx *Tx) Reset(index uint64, time int64) {
	tx.index, tx.time = index, time
	clear(tx.changed)
	tx.keys = nil
	tx.last = lastRow{}
}

// Get returns the row at key in table, or ErrNotFound, as View.Get.
func (tx *Tx) Get(table, key string) (Row, error) {
	r, err := tx.View.getKey(tx.key(table, key), table, key)
	switch {
	case err == nil:
		tx.last = lastRow{table: table, key: key, create: r.CreateIndex, found: true, valid: true}
	case errors.Is(err, ErrNotFound):
		tx.last = lastRow{table: table, key: key, valid: true}
	}
	return r, err
}

// createIndex returns the create index of the row at key in table, and
// whether it exists.
func (tx *Tx) createIndex(table, key string) (uint64, bool, error) {
	if l := &tx.last; l.valid && l.key == key && l.table == table {
		return l.create, l.found, nil
	}
	r, err := tx.Get(table, key)
	switch {
	case err == nil:
		return r.CreateIndex, true, nil
	case errors.Is(err, ErrNotFound):
		return 0, false, nil
	}
	return 0, false, err
}

// key lays out the key of the row at key in table in the Tx's buffer,
// valid until the next call: writers copy what they keep of a key.
func (tx *Tx) key(table, key string) []byte {
	tx.keyBuf = layout.AppendRowKey(tx.keyBuf[:0], table, key)
	return tx.keyBuf
}

// Index returns the index of the entry being applied.
func (tx *Tx) Index() uint64 { return tx.index }

// Time returns the leader time of the entry being applied, in Unix nanoseconds.
func (tx *Tx) Time() int64 { return tx.time }

// Put writes value at key in table, keeping the row's create index.
func (tx *Tx) Put(table, key string, value []byte) error {
	create, err := tx.rowCreate(table, key)
	if err != nil {
		return err
	}
	if err := layout.SetOwned(tx.w, tx.key(table, key), encodeRow(Row{CreateIndex: create, ModifyIndex: tx.index, Value: value})); err != nil {
		return fmt.Errorf("put %s/%s: %w", table, key, err)
	}
	tx.wrote(table, key, create)
	return nil
}

// rowCreate returns the create index a write of the row at key in table
// gives it: the row's, or this entry's for a new row.
func (tx *Tx) rowCreate(table, key string) (uint64, error) {
	create, found, err := tx.createIndex(table, key)
	if err != nil {
		return 0, err
	}
	if !found {
		create = tx.index
	}
	return create, nil
}

// wrote records a write of the row at key in table, created at create.
func (tx *Tx) wrote(table, key string, create uint64) {
	tx.last = lastRow{table: table, key: key, create: create, found: true, valid: true}
	tx.changed[table] = struct{}{}
	tx.touch(table, key)
}

// PutIndex writes an index row (a key whose value and create index nobody
// reads) without reading the old row first: both indexes become the
// entry's. Apply stays deterministic, so a rebuild writes the same rows.
func (tx *Tx) PutIndex(table, key string) error { return putIndex(tx, table, key) }

// PutIndexKey is PutIndex of a key laid out in bytes (which the Tx copies):
// for a projection that writes many index rows, the history's, from a
// buffer of its own rather than a string each.
func (tx *Tx) PutIndexKey(table string, key []byte) error { return putIndex(tx, table, key) }

func putIndex[K string | []byte](tx *Tx, table string, key K) error {
	tx.keyBuf = layout.AppendRowKey(tx.keyBuf[:0], table, key)
	if err := layout.SetOwned(tx.w, tx.keyBuf, tx.indexRow()); err != nil {
		return fmt.Errorf("put index %s/%s: %w", table, key, err)
	}
	if tx.last.key == string(key) && tx.last.table == table {
		tx.last = lastRow{}
	}
	tx.changed[table] = struct{}{}
	return nil
}

// indexRow returns the value of an index row the entry writes: a header
// of its index, twice. Every index row of the entry shares it, so that
// writing one allocates nothing: writers keep it as they are handed it,
// and nothing changes it (its capacity ends with it).
func (tx *Tx) indexRow() []byte {
	if len(tx.idxRow) == 0 || indexOf(tx.idxRow) != tx.index {
		b := layout.EncodeRow(tx.index, tx.index, nil)
		tx.idxRow = b[:layout.RowHeader:layout.RowHeader]
	}
	return tx.idxRow
}

// indexOf returns the create index of the row value b.
func indexOf(b []byte) uint64 {
	c, _ := layout.RowHead(b)
	return c
}

// Delete removes key from table and reports whether it existed; the table
// counts as changed only when it did.
func (tx *Tx) Delete(table, key string) (bool, error) {
	if _, found, err := tx.createIndex(table, key); err != nil || !found {
		return false, err
	}
	if err := tx.w.Delete(tx.key(table, key)); err != nil {
		return false, fmt.Errorf("delete %s/%s: %w", table, key, err)
	}
	tx.last = lastRow{table: table, key: key, valid: true}
	tx.changed[table] = struct{}{}
	tx.touch(table, key)
	return true, nil
}

// DeleteKnown removes key from table without reading it first: for rows
// the caller knows exist (the index rows of a row it just read), where
// Delete's read would be wasted. The table counts as changed.
func (tx *Tx) DeleteKnown(table, key string) error {
	if err := tx.w.Delete(tx.key(table, key)); err != nil {
		return fmt.Errorf("delete %s/%s: %w", table, key, err)
	}
	tx.last = lastRow{table: table, key: key, valid: true}
	tx.changed[table] = struct{}{}
	tx.touch(table, key)
	return nil
}

// changedTables returns the changed tables in sorted order.
func (tx *Tx) changedTables() []string {
	out := make([]string, 0, len(tx.changed))
	for t := range tx.changed {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// touch records a changed key of a key-watched table.
func (tx *Tx) touch(table, key string) {
	if tx.quiet || !keyWatched[table] {
		return
	}
	if tx.keys == nil {
		tx.keys = map[string]struct{}{}
	}
	tx.keys[KeyTopic(table, key)] = struct{}{}
}

// Changed returns the tables the entry has changed so far, in no order.
func (tx *Tx) Changed() iter.Seq[string] { return maps.Keys(tx.changed) }

// Finish ends the FSM's apply of the entry: it records the entry's index
// as the index of every changed table. It returns the changed tables and,
// for key-watched tables, the changed keys as KeyTopic names: the topics
// the Notifier wakes.
func (tx *Tx) Finish() ([]string, error) {
	tables := tx.changedTables()
	for _, t := range tables {
		if err := tx.w.Set(layout.TableIndexKey(t), kv.Uint64Value(tx.index)); err != nil {
			return nil, err
		}
	}
	for k := range tx.keys {
		tables = append(tables, k)
	}
	return tables, nil
}
