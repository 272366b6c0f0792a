package projections

import (
	"bytes"
	"hash/maphash"
	"slices"
	"strings"

	"github.com/ordoplane/ordo/storage/kv"
)

// freshRowsLimit bounds the bytes of rows a replay's freshWriters keep in
// memory per generation (two generations are kept).
var freshRowsLimit = 64 << 20

// freshKeysLimit bounds how many key hashes a freshWriter keeps to answer
// that a key is absent; past it, misses ask Pebble.
const freshKeysLimit = 32 << 20

// freshWriter writes a replay's batches: write-only Pebble batches, which
// cost a fraction of an indexed one, with the rows it wrote and read kept
// in memory so that the rows a run of entries keeps touching (a job, its
// summary, its allocations) are not read back from Pebble.
//
// Every write not yet committed is in the current generation of the
// cache, so a Get that misses the cache reads the committed store. Writes
// reach the Pebble batch only when it is committed (or before a scan),
// one per key written since the last commit: a row a run of entries
// rewrites (a job's summary, an allocation placed then updated) costs
// Pebble one write, not one per entry. When a
// commit leaves the current generation over the limit, it becomes the
// previous one (the previous is dropped); a hit in the previous moves the
// row forward. A scan commits the batch first and reads the store.
//
// A writer into an empty store (or keyspace) is complete: it wrote every
// key the store holds, so it keeps the hash of every key it wrote and
// answers a key it never wrote as absent without asking Pebble (a rebuild
// mostly writes new rows, and asks for each first).
type freshWriter struct {
	store *kv.Store
	b     *kv.WriteBatch
	// cur and prev are the cache's generations; an entry's nil value is a
	// row known to be absent.
	cur, prev map[string]cached
	size      int
	limit     int
	// pending are the rows written since the last flush, in the order
	// first written; an entry of cur waiting for the current flush has
	// its slot.
	pending []pendingRow
	flushes uint32
	// keyBuf is where flush lays out the key it hands to Pebble.
	keyBuf []byte
	// complete: keys holds the hash of every key the store holds in the
	// tables hashed says are (a table first read before it is written;
	// hashing the keys of a table nothing reads, say an index the history
	// appends to, would be wasted).
	complete bool
	keys     map[uint64]struct{}
	seed     maphash.Seed
	hashed   tableFlags
}

// tableFlags is a flag per table, with the last table asked for
// remembered (a run of writes mostly stays in one table).
type tableFlags struct {
	m        map[string]bool
	last     []byte
	lastFlag bool
}

// get returns table's flag, setting it to def when the table has none.
func (f *tableFlags) get(table []byte, def bool) bool {
	if len(f.last) > 0 && bytes.Equal(table, f.last) {
		return f.lastFlag
	}
	v, ok := f.m[string(table)]
	if !ok {
		if f.m == nil {
			f.m = map[string]bool{}
		}
		v = def
		f.m[string(table)] = v
	}
	f.last, f.lastFlag = append(f.last[:0], table...), v
	return v
}

// cached is a row a freshWriter keeps: its value (nil: absent) and, for a
// write not yet flushed, the flush it waits for (1 + the number of
// flushes before it; 0: none) and its slot in pending.
type cached struct {
	v       []byte
	pending uint32
	slot    uint32
}

// pendingRow is a row written since the last flush: its key and last
// value (nil: deleted).
type pendingRow struct {
	key string
	v   []byte
}

var _ kv.Writer = (*freshWriter)(nil)

// newFreshWriter returns a writer into store keeping up to limit bytes of
// rows per generation; complete says the store (or the keyspace written)
// is empty.
func newFreshWriter(store *kv.Store, complete bool, limit int) *freshWriter {
	w := &freshWriter{store: store, b: store.WriteBatch(), cur: map[string]cached{},
		limit: limit, complete: complete, seed: maphash.MakeSeed()}
	if complete {
		w.keys = map[uint64]struct{}{}
	}
	return w
}

func (w *freshWriter) Get(key []byte) ([]byte, error) {
	if c, ok := w.cur[string(key)]; ok {
		return present(c.v)
	}
	if c, ok := w.prev[string(key)]; ok {
		w.keep(string(key), c.v, false)
		return present(c.v)
	}
	if w.complete && w.hashes(key, true) {
		if _, ok := w.keys[maphash.Bytes(w.seed, key)]; !ok {
			return nil, kv.ErrNotFound
		}
	}
	v, err := w.store.Get(key)
	switch {
	case err == nil:
		w.keep(string(key), v, false)
	case err == kv.ErrNotFound:
		w.keep(string(key), nil, false)
	}
	return v, err
}

// present returns v, or kv.ErrNotFound for a row known absent.
func present(v []byte) ([]byte, error) {
	if v == nil {
		return nil, kv.ErrNotFound
	}
	return v, nil
}

func (w *freshWriter) Scan(lower, upper []byte, reverse bool, fn func(k, v []byte) error) error {
	if err := w.flush(); err != nil {
		return err
	}
	return w.store.Scan(lower, upper, reverse, fn)
}

func (w *freshWriter) Set(key, value []byte) error {
	return w.setOwned(key, bytes.Clone(value))
}

// setOwned is Set keeping value, which the caller hands over.
func (w *freshWriter) setOwned(key, value []byte) error {
	if value == nil {
		value = []byte{} // nil is an absent row
	}
	if old := w.keep(string(key), value, true); old == nil {
		// A key the generation holds with a value is one the store holds
		// or this writer wrote: written already.
		w.written(key)
	}
	return nil
}

func (w *freshWriter) Delete(key []byte) error {
	w.keep(string(key), nil, true)
	return nil
}

// keep caches key's value (nil: absent) in the current generation, to be
// flushed when pending, and returns the value it replaced there (nil:
// none, or absent).
func (w *freshWriter) keep(key string, v []byte, pending bool) []byte {
	c, ok := w.cur[key]
	if ok {
		w.size -= len(key) + len(c.v)
	}
	flush, slot := w.flushes+1, c.slot
	switch {
	case pending && c.pending == flush:
		w.pending[slot].v = v
	case pending:
		slot = uint32(len(w.pending))
		w.pending = append(w.pending, pendingRow{key: key, v: v})
	default:
		flush = c.pending // a read keeps a write waiting
	}
	w.cur[key] = cached{v: v, pending: flush, slot: slot}
	w.size += len(key) + len(v)
	return c.v
}

// written records that the store holds key; past freshKeysLimit the
// writer stops answering absence itself.
func (w *freshWriter) written(key []byte) {
	if !w.complete || !w.hashes(key, false) {
		return
	}
	if len(w.keys) >= freshKeysLimit {
		w.complete, w.keys = false, nil
		return
	}
	w.keys[maphash.Bytes(w.seed, key)] = struct{}{}
}

// hashes reports whether the writer keeps the hashes of the keys of key's
// table: from the table's first read, if no write came before it. A key
// of no table is never hashed.
func (w *freshWriter) hashes(key []byte, read bool) bool {
	tb := keyTable(key)
	if len(tb) == 0 {
		return false
	}
	return w.hashed.get(tb, read)
}

// flush writes the pending keys' last values into the batch in key order
// (Pebble's memtable inserts a run of ascending keys from where the last
// one went, far cheaper than scattered ones), commits it and starts the
// next one.
func (w *freshWriter) flush() error {
	if len(w.pending) == 0 {
		return nil
	}
	slices.SortFunc(w.pending, func(a, b pendingRow) int { return strings.Compare(a.key, b.key) })
	for _, p := range w.pending {
		w.keyBuf = append(w.keyBuf[:0], p.key...)
		var err error
		if p.v != nil {
			err = w.b.Set(w.keyBuf, p.v)
		} else {
			err = w.b.Delete(w.keyBuf)
		}
		if err != nil {
			return err
		}
	}
	clear(w.pending)
	w.pending = w.pending[:0]
	w.flushes++ // every entry's pending flush is past
	if err := w.b.Commit(false); err != nil {
		return err
	}
	w.b = w.store.WriteBatch()
	return nil
}

// commit commits the batch and, when the current generation has
// outgrown the limit, ages it: everything in it is now in the store.
func (w *freshWriter) commit() error {
	if err := w.flush(); err != nil {
		return err
	}
	if w.size > w.limit {
		w.prev, w.cur, w.size = w.cur, make(map[string]cached, len(w.cur)), 0
	}
	return nil
}

// close releases the open batch.
func (w *freshWriter) close() { w.b.Close() }
