package rebuild

import (
	"bytes"
	"hash/maphash"

	"github.com/ordoplane/ordo/projections/internal/layout"
	"github.com/ordoplane/ordo/storage/kv"
)

// freshRowsLimit bounds the bytes of rows a replay's freshWriters keep in
// memory per generation (two generations are kept). What a writer keeps
// that matters is the rows its open batch rewrites; rows kept longer cost
// the collector more than the reads they save: a 1,000,000-event rebuild
// from scratch took 5-10% less CPU with 8 MiB than with 64 (and 256 MiB
// took 15% more; docs/operations.md).
var freshRowsLimit = 8 << 20

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
// key the store holds, so it keeps the hash of every key it wrote to a
// table read before it was written and answers a key of such a table it
// never wrote as absent without asking Pebble (a rebuild mostly writes
// new rows, and asks for each first). The rows of a table nothing has
// read go straight to the batch's pending rows, past the cache, or, for
// a rebuild's lanes, to the writer's row log (rowLog), which keeps them
// out of the store until the switch's table files take them.
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
	// its slot. vals holds their values, row i's at pending's seq i
	// (sortPending moves pending's rows, not their values).
	pending []pendingRow
	vals    [][]byte
	values  []pendingValue
	flushes uint32
	// keyBuf and rowBuf are where flush lays out the key and the encoded
	// row values it hands to Pebble.
	keyBuf, rowBuf []byte
	// complete: keys holds the hash of every key the store holds in the
	// tables read before they were written (readFirst; hashing the keys
	// of a table nothing reads, say an index the history appends to,
	// would be wasted), in a filter that may also claim a few it does not
	// hold (keyFilter: those are read from the store).
	complete bool
	keys     *keyFilter
	seed     maphash.Seed
	uses     tableUses
	// log, when set, takes the rows of tables nothing has read (a
	// from-scratch rebuild's lanes: rowLog) instead of pending; spilled
	// says the open batch holds rows the log wrote into it.
	log     *rowLog
	spilled bool
	// arena, when set, keeps the bytes of the rows committed to the
	// tables of arenaTables (rowArena), which a read that misses the cache
	// finds before the store. A table joins them once the writer has read
	// arenaAfterReads of its rows from the store, and at least one for
	// every arenaReadShare rows it committed to it (tableRows): the rows a
	// projection reads long after it wrote them (a job registered again,
	// about a read for each row), not those it reads only while it still
	// keeps them (an allocation, updated right after its placement, read
	// from the store once for every few hundred, at a batch's edge), whose
	// copies would be wasted.
	arena       *rowArena
	arenaTables map[string]bool
	storeReads  map[string]int
	tableRows   map[string]int
	arenaLast   lastTable // the last table flush asked about
	// missed is the key value last found uncached, when missedOK: the
	// Get that follows (GetValue's) need not look for it again.
	missed   []byte
	missedOK bool
}

// arenaAfterReads is how many of a table's rows a writer with an arena
// reads from the store before it keeps the table's rows in the arena, and
// arenaReadShare how many rows committed to the table one such read must
// be among at most. In the generated scheduling history of make bench,
// the jobs and their summaries are read about once for each row
// committed (a job registered again), the allocations, their references
// in the jobs projection and the job versions once for every 170–370.
const (
	arenaAfterReads = 64
	arenaReadShare  = 16
)

// tableUse is how a freshWriter has used a table so far.
type tableUse uint8

const (
	unused tableUse = iota
	// writtenOnly: written, never read; its rows go straight to pending,
	// past the cache (an index a projection only adds to, say the
	// history's), and its keys are not hashed.
	writtenOnly
	// readFirst: read before it was written; its keys are hashed.
	readFirst
	// readLater: read after it was written, or a key of no table; its
	// keys are not hashed.
	readLater
)

// tableUses is the use of each table, with the last table asked for
// remembered (a run of reads and writes mostly stays in one table).
type tableUses struct {
	m map[string]tableUse
	// last and lastPrefix are the last table and the prefix of its rows'
	// keys (rowPrefix), which a key of it starts with.
	last, lastPrefix []byte
	lastUse          tableUse
}

// note records a read (or a write) of key's table and returns the table's
// use before and after it.
func (u *tableUses) note(key []byte, read bool) (before, after tableUse) {
	if len(u.lastPrefix) > 0 && bytes.HasPrefix(key, u.lastPrefix) {
		before = u.lastUse
	} else {
		tb := layout.KeyTable(key)
		if len(tb) == 0 {
			return readLater, readLater
		}
		before = u.m[string(tb)] // no allocation for the lookup
		u.last, u.lastPrefix = append(u.last[:0], tb...), layout.RowPrefix(u.lastPrefix[:0], tb)
	}
	switch after = before; {
	case before == unused && read:
		after = readFirst
	case before == unused:
		after = writtenOnly
	case before == writtenOnly && read:
		after = readLater
	}
	if after != before {
		if u.m == nil {
			u.m = map[string]tableUse{}
		}
		u.m[string(u.last)] = after
	}
	u.lastUse = after
	return before, after
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
	enc     layout.Encoder
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

// pendingRow is a row written since the last flush: its key and, for a
// row written as a value, 1 + its value's place in the writer's values.
// Its bytes (nil: deleted; for a row written as a value, its header) are
// its owner's at seq (freshWriter.vals, rowLog.vals). Kept small, 24
// bytes: flush and a log's cut sort them, moving every row a few times
// (with the bytes in the row, 48, the sort of a history lane's stage
// took a quarter longer; BenchmarkSortPending).
type pendingRow struct {
	key   string
	value uint32
	// seq is the row's place in the order written, which orders the
	// writes of one key (a table nothing read is written past the cache,
	// writtenOnly, so its key may be pending twice) and indexes its bytes.
	seq uint32
}

// pendingValue is the value of a row written as one since the last flush.
type pendingValue struct {
	val any
	enc layout.Encoder
}

// setPending makes p the pending write of n.
func (w *freshWriter) setPending(p *pendingRow, n *cached) {
	w.vals[p.seq] = n.v
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

var (
	_ kv.Writer          = (*freshWriter)(nil)
	_ layout.ValueWriter = (*freshWriter)(nil)
	_ layout.OwnedSetter = (*freshWriter)(nil)
)

// newFreshWriter returns a writer into store keeping up to limit bytes of
// rows per generation; complete says the store (or the keyspace written)
// is empty.
func newFreshWriter(store *kv.Store, complete bool, limit int) *freshWriter {
	w := &freshWriter{store: store, b: store.WriteBatch(), cur: map[string]cached{},
		limit: limit, complete: complete, seed: maphash.MakeSeed()}
	if complete {
		w.keys = &keyFilter{}
	}
	return w
}

func (w *freshWriter) Get(key []byte) ([]byte, error) {
	before, use := w.uses.note(key, true)
	if before == writtenOnly {
		// The first read of the table: what was written to it past the
		// cache goes to the store first.
		if err := w.spillLog(); err != nil {
			return nil, err
		}
		if err := w.flush(); err != nil {
			return nil, err
		}
	}
	if w.missedOK && bytes.Equal(key, w.missed) {
		w.missedOK = false // value just found it uncached
	} else if c, ok := w.lookup(key); ok {
		if c.enc != nil {
			return w.encode(string(key), c)
		}
		return present(c.v)
	}
	if w.complete && use == readFirst {
		if !w.keys.mayHave(maphash.Bytes(w.seed, key)) {
			return nil, kv.ErrNotFound
		}
	}
	if w.arena != nil {
		if v, ok := w.arena.get(key); ok {
			// A copy: the cache may keep it past the arena's next reset.
			v = bytes.Clone(v)
			w.keep(string(key), cached{v: v}, false)
			return present(v)
		}
		w.readFromStore(key)
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
	b, err := c.enc.AppendEncoded(append(make([]byte, 0, 2*valueBytes), c.v...), c.val)
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

// lookup returns the row the cache holds at key, moving one found in the
// previous generation into the current one.
func (w *freshWriter) lookup(key []byte) (cached, bool) {
	if c, ok := w.cur[string(key)]; ok {
		return c, true
	}
	if c, ok := w.prev[string(key)]; ok {
		return w.keep(string(key), cached{v: c.v, val: c.val, enc: c.enc}, false), true
	}
	return cached{}, false
}

// Value implements layout.ValueWriter.
func (w *freshWriter) Value(key []byte) (any, uint64, uint64, layout.ValueState) {
	c, ok := w.lookup(key)
	switch {
	case !ok:
		w.missed, w.missedOK = append(w.missed[:0], key...), true
		return nil, 0, 0, layout.ValueUnknown
	case c.v == nil:
		return nil, 0, 0, layout.ValueAbsent
	case c.val == nil:
		return nil, 0, 0, layout.ValueUnknown
	}
	create, modify := layout.RowHead(c.v)
	return c.val, create, modify, layout.ValueKept
}

// KeepValue implements layout.ValueWriter.
func (w *freshWriter) KeepValue(key []byte, v any) {
	c, ok := w.cur[string(key)]
	if !ok || c.v == nil || c.enc != nil {
		return
	}
	w.size -= c.size(string(key))
	c.val = v
	w.cur[string(key)] = c
	w.size += c.size(string(key))
}

// SetValue implements layout.ValueWriter.
func (w *freshWriter) SetValue(key []byte, create, modify uint64, v any, enc layout.Encoder) error {
	_, use := w.uses.note(key, false)
	w.kept(key, use, cached{v: layout.EncodeRow(create, modify, nil), val: v, enc: enc})
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
	if err := w.spillLog(); err != nil {
		return err
	}
	if err := w.flush(); err != nil {
		return err
	}
	return w.store.Scan(lower, upper, reverse, fn)
}

func (w *freshWriter) Set(key, value []byte) error {
	return w.SetOwned(key, bytes.Clone(value))
}

// SetOwned is Set keeping value, which the caller hands over.
func (w *freshWriter) SetOwned(key, value []byte) error {
	if value == nil {
		value = []byte{} // nil is an absent row
	}
	w.write(key, cached{v: value})
	return nil
}

func (w *freshWriter) Delete(key []byte) error {
	w.write(key, cached{})
	return nil
}

// write writes n at key: straight into pending when nothing has read
// key's table, else through the cache.
func (w *freshWriter) write(key []byte, n cached) {
	w.missedOK = false
	if _, use := w.uses.note(key, false); use != writtenOnly {
		w.kept(key, use, n)
		return
	}
	if w.log != nil && w.log.frozen == nil && bytes.HasPrefix(key, layout.RowsPrefix) {
		w.log.add(key, n.v)
		return
	}
	w.pending = append(w.pending, pendingRow{key: string(key), seq: uint32(len(w.pending))})
	w.vals = append(w.vals, n.v)
}

// kept keeps n as key's pending row (see keep) in a table of use, and
// hashes key if it is new to a hashed table.
func (w *freshWriter) kept(key []byte, use tableUse, n cached) {
	// A key the generation holds with a value is one the store holds or
	// this writer wrote: written already.
	if old := w.keep(string(key), n, true); old.v == nil && n.v != nil && use == readFirst {
		w.written(key)
	}
}

// keep caches n as key's row in the current generation, to be flushed
// when pending, and returns n as kept. When pending, it returns the row it
// replaced there (v nil: none, or absent) instead.
func (w *freshWriter) keep(key string, n cached, pending bool) cached {
	w.missedOK = false
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
		w.vals = append(w.vals, nil)
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

// written records that the store holds key, of a readFirst table; past
// freshKeysLimit the writer stops answering absence itself.
func (w *freshWriter) written(key []byte) {
	if !w.complete {
		return
	}
	if w.keys.len() >= freshKeysLimit {
		w.complete, w.keys = false, nil
		return
	}
	w.keys.add(maphash.Bytes(w.seed, key))
}

// flush writes the pending keys' last values into the batch in key order
// (Pebble's memtable inserts a run of ascending keys from where the last
// one went, far cheaper than scattered ones), commits it and starts the
// next one.
func (w *freshWriter) flush() error {
	if len(w.pending) == 0 && !w.spilled {
		return nil
	}
	sortPending(w.pending)
	if w.arena != nil && w.tableRows == nil {
		w.tableRows = map[string]int{}
	}
	for _, p := range w.pending {
		w.keyBuf = append(w.keyBuf[:0], p.key...)
		var err error
		var v []byte // the row as committed (nil: deleted)
		switch pv := w.vals[p.seq]; {
		case p.value != 0:
			val := &w.values[p.value-1]
			if w.rowBuf, err = val.enc.AppendEncoded(append(w.rowBuf[:0], pv...), val.val); err == nil {
				v = w.rowBuf
				err = w.b.Set(w.keyBuf, v)
			}
		case pv != nil:
			v = pv
			err = w.b.Set(w.keyBuf, v)
		default:
			err = w.b.Delete(w.keyBuf)
		}
		if w.arena != nil && err == nil && w.arenaLast.of(w.keyBuf, w.arenaTables, w.tableRows) {
			w.arena.put(w.keyBuf, v)
		}
		if err != nil {
			return err
		}
	}
	if w.arena != nil {
		w.arenaLast.count(w.tableRows)
	}
	clear(w.pending)
	w.pending = w.pending[:0]
	clear(w.vals)
	w.vals = w.vals[:0]
	clear(w.values)
	w.values = w.values[:0]
	w.flushes++ // every entry's pending flush is past
	w.spilled = false
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
	if w.log != nil && w.log.cut() {
		// Over the budget: this lane's log goes to the store.
		if err := w.spillLog(); err != nil {
			return err
		}
		if err := w.flush(); err != nil {
			return err
		}
	}
	if w.size > w.limit {
		// The dropped generation's map, cleared, is the next current one:
		// grown to the size a generation reaches, it never grows again
		// (a new one each time was 7% of the bytes a rebuild allocated).
		next := w.prev
		clear(next)
		if next == nil {
			next = make(map[string]cached, len(w.cur))
		}
		w.prev, w.cur, w.size = w.cur, next, 0
	}
	return nil
}

// readFromStore counts a read of key's row from the store, its table's
// rows kept in the arena from arenaAfterReads on.
func (w *freshWriter) readFromStore(key []byte) {
	tb := layout.KeyTable(key)
	if len(tb) == 0 || w.arenaTables[string(tb)] {
		return
	}
	if w.storeReads == nil {
		w.storeReads, w.arenaTables = map[string]int{}, map[string]bool{}
	}
	n := w.storeReads[string(tb)] + 1
	w.storeReads[string(tb)] = n
	if n >= arenaAfterReads && n*arenaReadShare >= w.tableRows[string(tb)] {
		w.arenaTables[string(tb)] = true
		w.arenaLast = lastTable{}
	}
}

// lastTable remembers whether the table of the last key asked for is in
// a set, and counts the keys asked for of it: a flush's rows come in key
// order, a table's together.
type lastTable struct {
	table []byte
	in    bool
	keys  int // asked for since last counted
}

// of reports whether key's table is in set; a change of table adds the
// keys counted of the last one to rows.
func (l *lastTable) of(key []byte, set map[string]bool, rows map[string]int) bool {
	tb := layout.KeyTable(key)
	if l.table == nil || !bytes.Equal(tb, l.table) {
		l.count(rows)
		l.table, l.in = append(l.table[:0], tb...), set[string(tb)]
	}
	l.keys++
	return l.in
}

// count adds the keys asked for of the last table since last counted to
// rows.
func (l *lastTable) count(rows map[string]int) {
	if l.keys > 0 {
		rows[string(l.table)] += l.keys
	}
	l.keys = 0
}

// spillLog writes what the log holds into the open batch, before the
// pending rows (which are newer), for the store to hold it: a table it
// logged is about to be read, or the logs outgrew their budget.
func (w *freshWriter) spillLog() error {
	if w.log == nil || w.log.empty() {
		return nil
	}
	w.spilled = true
	return w.log.spill(w.b)
}

// close releases the open batch.
func (w *freshWriter) close() { w.b.Close() }
