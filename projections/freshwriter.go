package projections

import (
	"bytes"
	"cmp"
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
	values  []pendingValue
	flushes uint32
	// keyBuf and rowBuf are where flush lays out the key and the encoded
	// row values it hands to Pebble.
	keyBuf, rowBuf []byte
	// complete: keys holds the hash of every key the store holds in the
	// tables hashed says are (a table first read before it is written;
	// hashing the keys of a table nothing reads, say an index the history
	// appends to, would be wasted).
	complete bool
	keys     map[uint64]struct{}
	seed     maphash.Seed
	hashed   tableFlags
	// read flags the tables something read: the rows of one nothing read
	// (an index a projection only adds to, say the history's) are
	// written without the cache, their keys neither kept nor looked up.
	read tableFlags
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

// set sets table's flag to v.
func (f *tableFlags) set(table []byte, v bool) {
	if f.m == nil {
		f.m = map[string]bool{}
	}
	f.m[string(table)] = v
	f.last, f.lastFlag = append(f.last[:0], table...), v
}

// cached is a row a freshWriter keeps: its bytes (nil: absent), its
// decoded value when a projection read or wrote it as one (GetValue,
// PutValue) and, for a write not yet flushed, the flush it waits for (1 +
// the number of flushes before it; 0: none) and its slot in pending.
type cached struct {
	// v is the row; for a row written as a value (enc set), only its
	// header: its bytes are made when needed.
	v       []byte
	val     any
	enc     encoder
	pending uint32
	slot    uint32
}

// valueBytes is what a freshWriter counts for a decoded value it keeps
// (the size of its encoding is not known until it is encoded).
const valueBytes = 256

// size is what the row at key counts against the writer's limit.
func (c *cached) size(key string) int {
	n := len(key) + len(c.v)
	if c.val != nil {
		n += valueBytes
	}
	return n
}

// pendingRow is a row written since the last flush: its key and last
// value (v nil: deleted), or for a row written as a value, its header and
// 1 + its value's place in the writer's values. Kept small: flush sorts
// them.
type pendingRow struct {
	key   string
	v     []byte
	value uint32
	// seq orders the writes of one key: a table nothing read is written
	// without the cache (writeOnly), so its key may be pending twice.
	seq uint32
}

// pendingValue is the value of a row written as one since the last flush.
type pendingValue struct {
	val any
	enc encoder
}

// setPending makes p the pending write of n.
func (w *freshWriter) setPending(p *pendingRow, n *cached) {
	p.v = n.v
	switch {
	case n.enc == nil:
		p.value = 0
	case p.value == 0:
		w.values = append(w.values, pendingValue{n.val, n.enc})
		p.value = uint32(len(w.values))
	default:
		w.values[p.value-1] = pendingValue{n.val, n.enc}
	}
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
	if err := w.reading(key); err != nil {
		return nil, err
	}
	c, ok := w.cur[string(key)]
	if !ok {
		if c, ok = w.prev[string(key)]; ok {
			c = w.keep(string(key), cached{v: c.v, val: c.val, enc: c.enc}, false)
		}
	}
	if ok {
		if c.enc != nil {
			return w.encode(string(key), c)
		}
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
		w.keep(string(key), cached{v: v}, false)
	case err == kv.ErrNotFound:
		w.keep(string(key), cached{}, false)
	}
	return v, err
}

// encode returns the bytes of c, a row at key written as a value, and
// keeps them: a reader asked for the bytes.
func (w *freshWriter) encode(key string, c cached) ([]byte, error) {
	b, err := c.enc.appendEncoded(append(make([]byte, 0, 2*valueBytes), c.v...), c.val)
	if err != nil {
		return nil, err
	}
	w.size -= c.size(key)
	c.v, c.enc = b, nil
	if c.pending == w.flushes+1 {
		w.setPending(&w.pending[c.slot], &c)
	}
	w.cur[key] = c
	w.size += c.size(key)
	return b, nil
}

// value implements valueWriter.
func (w *freshWriter) value(key []byte) (any, Row, valueState) {
	c, ok := w.cur[string(key)]
	if !ok {
		if c, ok = w.prev[string(key)]; !ok {
			return nil, Row{}, valueUnknown
		}
		c = w.keep(string(key), cached{v: c.v, val: c.val, enc: c.enc}, false)
	}
	switch {
	case c.v == nil:
		return nil, Row{}, valueAbsent
	case c.val == nil:
		return nil, Row{}, valueUnknown
	}
	return c.val, rowHead(c.v), valueKept
}

// keepValue implements valueWriter.
func (w *freshWriter) keepValue(key []byte, v any) {
	c, ok := w.cur[string(key)]
	if !ok || c.v == nil || c.enc != nil {
		return
	}
	w.size -= c.size(string(key))
	c.val = v
	w.cur[string(key)] = c
	w.size += c.size(string(key))
}

// setValue implements valueWriter.
func (w *freshWriter) setValue(key []byte, r Row, v any, enc encoder) error {
	if old := w.keep(string(key), cached{v: encodeRow(r), val: v, enc: enc}, true); old.v == nil {
		w.written(key)
	}
	return nil
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
	if w.writeOnly(key, value) {
		// Marks the table unhashed (its first access is this write), so
		// a later read asks the store, which holds the key.
		w.written(key)
		return nil
	}
	if old := w.keep(string(key), cached{v: value}, true); old.v == nil {
		// A key the generation holds with a value is one the store holds
		// or this writer wrote: written already.
		w.written(key)
	}
	return nil
}

func (w *freshWriter) Delete(key []byte) error {
	if !w.writeOnly(key, nil) {
		w.keep(string(key), cached{}, true)
	}
	return nil
}

// writeOnly writes v at key (nil: deletes key) straight into pending when
// nothing has read key's table, and reports whether it did.
func (w *freshWriter) writeOnly(key, v []byte) bool {
	tb := keyTable(key)
	if len(tb) == 0 || w.read.get(tb, false) {
		return false
	}
	w.pending = append(w.pending, pendingRow{key: string(key), v: v, seq: uint32(len(w.pending))})
	return true
}

// reading flags key's table as read, first flushing what was written to
// it without the cache, which a read of the cache would miss.
func (w *freshWriter) reading(key []byte) error {
	tb := keyTable(key)
	if len(tb) == 0 || w.read.get(tb, true) {
		return nil
	}
	w.read.set(tb, true)
	return w.flush()
}

// keep caches n as key's row in the current generation, to be flushed
// when pending, and returns n as kept. When pending, it returns the row it
// replaced there (v nil: none, or absent) instead.
func (w *freshWriter) keep(key string, n cached, pending bool) cached {
	c, ok := w.cur[key]
	if ok {
		w.size -= c.size(key)
	}
	flush, slot := w.flushes+1, c.slot
	switch {
	case pending && c.pending == flush:
		w.setPending(&w.pending[slot], &n)
	case pending:
		slot = uint32(len(w.pending))
		w.pending = append(w.pending, pendingRow{key: key, seq: slot})
		w.setPending(&w.pending[slot], &n)
	default:
		flush = c.pending // a read keeps a write waiting
	}
	n.pending, n.slot = flush, slot
	w.cur[key] = n
	w.size += n.size(key)
	if pending {
		return c
	}
	return n
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
	slices.SortFunc(w.pending, func(a, b pendingRow) int {
		if c := strings.Compare(a.key, b.key); c != 0 {
			return c
		}
		return cmp.Compare(a.seq, b.seq)
	})
	for _, p := range w.pending {
		w.keyBuf = append(w.keyBuf[:0], p.key...)
		var err error
		switch {
		case p.value != 0:
			pv := &w.values[p.value-1]
			if w.rowBuf, err = pv.enc.appendEncoded(append(w.rowBuf[:0], p.v...), pv.val); err == nil {
				err = w.b.Set(w.keyBuf, w.rowBuf)
			}
		case p.v != nil:
			err = w.b.Set(w.keyBuf, p.v)
		default:
			err = w.b.Delete(w.keyBuf)
		}
		if err != nil {
			return err
		}
	}
	clear(w.pending)
	w.pending = w.pending[:0]
	clear(w.values)
	w.values = w.values[:0]
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
