package rebuild

import (
	"bytes"
	"container/heap"
	"math"
	"runtime/debug"
	"sort"
	"sync/atomic"
	"unsafe"

	"github.com/ordoplane/ordo/projections/internal/layout"
	"github.com/ordoplane/ordo/storage/kv"
	"github.com/ordoplane/ordo/storage/slab"
)

// rowLogBudget bounds the bytes the row logs of one rebuild hold in
// memory, all lanes together, and an eighth of the process's soft memory
// limit, if it has one, bounds it too (rebuildBudget); past it, the lane
// that crossed it writes its log into the scratch store, as rows went
// before there were logs.
var rowLogBudget int64 = 1 << 30

// memBudget is the bytes the row logs, or the row arenas, of one
// rebuild's lanes may hold together, and what they hold.
type memBudget struct {
	limit int64
	used  atomic.Int64
}

// add adds n bytes held and reports whether they now exceed the limit.
func (b *memBudget) add(n int64) bool { return b.used.Add(n) > b.limit }

// rebuildBudget returns a budget of limit bytes, or of the process's soft
// memory limit (debug.SetMemoryLimit) over share if that is less.
func rebuildBudget(limit, share int64) *memBudget {
	if soft := debug.SetMemoryLimit(-1); soft != math.MaxInt64 {
		limit = min(limit, soft/share)
	}
	return &memBudget{limit: limit}
}

// rowLog holds, in memory, the rows a from-scratch rebuild's writer wrote
// to tables nothing has read: the indexes a projection only adds to (the
// history's, an allocation's by node, job and eval), most of the rows a
// rebuild writes. Kept out of the scratch store, they cost neither its
// memtable nor its flushes, nor the read that copies it into table files:
// the switch's files take them from the log, merged with what the scratch
// store holds (rowMerge).
//
// Rows arrive in the stage, in the order written; each commit of the
// writer cuts the stage into a run: sorted by key, the last write of each
// key kept, laid out in pointer-free memory outside Go's heap (mem: the
// collector neither scans nor counts it). A later run is newer than an
// earlier one.
type rowLog struct {
	// stage holds the rows since the last cut; until the cut, their keys
	// are laid out one after the other in keys (a string each would be
	// an allocation each), ends[i] where row i's ends. A cut (or a
	// spill) gives the stage's rows their keys as strings in keys
	// (keyed), copies what it keeps, and clears the stage before keys is
	// written again: one buffer serves every cut.
	stage []pendingRow
	vals  [][]byte // the stage's values, row i's at seq i
	keys  []byte
	ends  []uint32
	runs  []logRun
	// mem holds the runs' bytes until release.
	mem slab.Slab
	// held is the bytes the runs hold; budget, shared by the lanes of a
	// rebuild, is what all their logs hold.
	held   int64
	budget *memBudget
	// tables is the bytes of each table's rows in the runs, which a
	// rebuild's table files are sized by (tableRuns).
	tables map[string]uint64
	// frozen, once the log's rows are in an online rebuild's table files
	// (freeze), says it takes no more rows; a spill then leaves out the
	// keys frozen reports written since, which the store holds newer.
	frozen func(key []byte) bool
}

// logRun is a run of a rowLog: its rows in key order, a key once.
type logRun struct {
	data []byte
	recs []logRec
}

// logRec is a row of a run: its key and value in the run's data (vlen -1:
// the row is deleted).
type logRec struct {
	off, klen uint32
	vlen      int32
}

func (r *logRun) key(i int) []byte {
	c := r.recs[i]
	return r.data[c.off : c.off+c.klen]
}

// value returns the value of row i, nil when the row is deleted.
func (r *logRun) value(i int) []byte {
	c := r.recs[i]
	if c.vlen < 0 {
		return nil
	}
	start := c.off + c.klen
	return r.data[start : start+uint32(c.vlen)]
}

func newRowLog(budget *memBudget) *rowLog {
	return &rowLog{budget: budget, tables: map[string]uint64{}}
}

// add logs v at key (v nil: a deletion). v is handed over.
func (l *rowLog) add(key, v []byte) {
	l.keys = append(l.keys, key...)
	l.ends = append(l.ends, uint32(len(l.keys)))
	l.stage = append(l.stage, pendingRow{seq: uint32(len(l.stage))})
	l.vals = append(l.vals, v)
}

// keyed gives the stage's rows their keys, strings in keys valid until
// the stage is cleared (clearStage).
func (l *rowLog) keyed() {
	all, start := unsafe.String(unsafe.SliceData(l.keys), len(l.keys)), uint32(0)
	for i, end := range l.ends {
		l.stage[i].key, start = all[start:end], end
	}
}

// clearStage empties the stage, whose keys nothing refers to any more,
// for keys to take the next rows' keys.
func (l *rowLog) clearStage() {
	clear(l.stage)
	clear(l.vals)
	l.stage, l.vals, l.keys, l.ends = l.stage[:0], l.vals[:0], l.keys[:0], l.ends[:0]
}

// empty reports whether the log holds no row.
func (l *rowLog) empty() bool { return len(l.stage) == 0 && len(l.runs) == 0 }

// cut makes the stage a run and reports whether the rebuild's logs now
// hold more than their budget.
func (l *rowLog) cut() bool {
	if len(l.stage) == 0 {
		return false
	}
	l.keyed()
	sortPending(l.stage)
	// The rows a later write of their key follows are left out: kept
	// holds the others, compacted in place.
	kept, size := l.stage[:0], 0
	for i, p := range l.stage {
		if i+1 < len(l.stage) && l.stage[i+1].key == p.key {
			continue
		}
		kept = append(kept, p)
		size += len(p.key) + len(l.vals[p.seq])
	}
	run := logRun{data: l.mem.Alloc(size)[:0], recs: l.recs(len(kept))}
	// The rows are in key order: a table's come together, counted once.
	var table []byte
	var tableBytes uint64
	count := func() {
		if tableBytes > 0 {
			l.tables[string(table)] += tableBytes
		}
	}
	for _, p := range kept {
		v := l.vals[p.seq]
		rec := logRec{off: uint32(len(run.data)), klen: uint32(len(p.key)), vlen: -1}
		run.data = append(run.data, p.key...)
		if v != nil {
			rec.vlen = int32(len(v))
			run.data = append(run.data, v...)
		}
		run.recs = append(run.recs, rec)
		if tb := layout.KeyTable(run.key(len(run.recs) - 1)); !bytes.Equal(tb, table) {
			count()
			table, tableBytes = tb, 0
		}
		tableBytes += uint64(len(p.key) + len(v))
	}
	count()
	l.clearStage()
	l.runs = append(l.runs, run)
	grown := int64(len(run.data) + 12*len(run.recs))
	l.held += grown
	return l.budget.add(grown)
}

// recs returns room for n records of a run, in the log's memory.
func (l *rowLog) recs(n int) []logRec {
	b := l.mem.Alloc(n * int(unsafe.Sizeof(logRec{})))
	return unsafe.Slice((*logRec)(unsafe.Pointer(unsafe.SliceData(b))), n)[:0]
}

// freeze makes the log take no more rows, its rows and those written
// before it in the table files of an online rebuild: written reports the
// keys written after, into the store, which a spill must not overwrite.
func (l *rowLog) freeze(written func(key []byte) bool) {
	l.cut()
	l.frozen = written
}

// spill writes every row the log holds into b, oldest first (a batch
// keeps the last write of a key), and empties the log; a frozen log's
// rows at keys written since it froze are left out.
func (l *rowLog) spill(b *kv.WriteBatch) error {
	for ri := range l.runs {
		r := &l.runs[ri]
		for i := range r.recs {
			if l.frozen != nil && l.frozen(r.key(i)) {
				continue
			}
			if err := setOrDelete(b, r.key(i), r.value(i)); err != nil {
				return err
			}
		}
	}
	l.keyed()
	for _, p := range l.stage {
		if err := setOrDelete(b, []byte(p.key), l.vals[p.seq]); err != nil {
			return err
		}
	}
	l.release()
	return nil
}

// release drops every row the log holds and returns its memory: nothing
// may refer to a run's bytes any more.
func (l *rowLog) release() {
	l.budget.add(-l.held)
	l.clearStage()
	l.runs, l.held = nil, 0
	l.mem.Release()
	clear(l.tables)
}

func setOrDelete(b *kv.WriteBatch, k, v []byte) error {
	if v == nil {
		return b.Delete(k)
	}
	return b.Set(k, v)
}

// rowMerge iterates, in key order, over the rows of the runs of some logs
// within a key range, the newest write of each key: a k-way merge of the
// runs, each cut to the range.
type rowMerge struct {
	h mergeHeap
	// key and value are the current row's (value nil: deleted).
	key, value []byte
}

// mergeCursor is where a merge stands in one run; rank orders runs by age
// (higher: newer).
type mergeCursor struct {
	run       *logRun
	i, end    int
	rank      int
	cachedKey []byte
}

type mergeHeap []*mergeCursor

func (h mergeHeap) Len() int { return len(h) }
func (h mergeHeap) Less(i, j int) bool {
	if c := bytes.Compare(h[i].cachedKey, h[j].cachedKey); c != 0 {
		return c < 0
	}
	return h[i].rank > h[j].rank // the newest write of a key first
}
func (h mergeHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *mergeHeap) Push(x any)   { *h = append(*h, x.(*mergeCursor)) }
func (h *mergeHeap) Pop() any     { old := *h; c := old[len(old)-1]; *h = old[:len(old)-1]; return c }
func (c *mergeCursor) load() bool {
	if c.i >= c.end {
		return false
	}
	c.cachedKey = c.run.key(c.i)
	return true
}

// mergeRows returns a merge of the rows of logs' runs with keys in [lower,
// upper); every log's runs are newer than the logs before it.
func mergeRows(logs []*rowLog, lower, upper []byte) *rowMerge {
	m := &rowMerge{}
	rank := 0
	for _, l := range logs {
		for ri := range l.runs {
			r := &l.runs[ri]
			lo := sort.Search(len(r.recs), func(i int) bool { return bytes.Compare(r.key(i), lower) >= 0 })
			hi := sort.Search(len(r.recs), func(i int) bool { return bytes.Compare(r.key(i), upper) >= 0 })
			c := &mergeCursor{run: r, i: lo, end: hi, rank: rank}
			rank++
			if c.load() {
				m.h = append(m.h, c)
			}
		}
	}
	heap.Init(&m.h)
	return m
}

// next moves to the next key, false past the last.
func (m *rowMerge) next() bool {
	if len(m.h) == 0 {
		return false
	}
	top := m.h[0]
	m.key, m.value = top.cachedKey, top.run.value(top.i)
	// Older writes of the key go.
	for len(m.h) > 0 && bytes.Equal(m.h[0].cachedKey, m.key) {
		c := m.h[0]
		c.i++
		if c.load() {
			heap.Fix(&m.h, 0)
		} else {
			heap.Pop(&m.h)
		}
	}
	return true
}
