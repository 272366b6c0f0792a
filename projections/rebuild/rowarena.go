package rebuild

import (
	"bytes"
	"encoding/binary"
	"hash/maphash"

	"github.com/ordoplane/ordo/storage/slab"
)

// rowArenaBudget bounds the bytes the row arenas of one rebuild hold, all
// lanes together, and a sixteenth of the process's soft memory limit, if
// it has one, bounds it too (rebuildBudget); a lane whose arena takes the
// total past it empties its own.
var rowArenaBudget int64 = 512 << 20

// rowArenaChunk is the size of an arena's buffers.
const rowArenaChunk = 4 << 20

// rowArena keeps, pointer-free, the bytes of the rows a rebuild's writer
// committed to the tables it reads (a job, its summary, an allocation),
// so that a row that left the writer's cache long ago (a job registered
// again 150,000 events later) is read back from memory rather than
// through the scratch store's level 0. The buffers are outside Go's heap
// (mem: the collector neither scans nor counts them), the index maps key
// hashes to places in them. A hash that two keys share names the last one
// put; a read checks the key, and a miss reads the store, which holds
// every committed row. What get returns is valid until the next reset or
// release: a caller that keeps it keeps a copy.
type rowArena struct {
	index  map[uint64]uint64 // key hash → chunk<<32 | offset of its record
	chunks [][]byte
	mem    slab.Slab
	seed   maphash.Seed
	held   int64
	budget *memBudget
}

func newRowArena(budget *memBudget) *rowArena {
	return &rowArena{index: map[uint64]uint64{}, seed: maphash.MakeSeed(), budget: budget}
}

// A record is the key's length and the value's (absentValue: the row was
// deleted), four bytes each, the key and the value.
const absentValue = ^uint32(0)

// put records v (nil: deleted) as the committed row at key.
func (a *rowArena) put(key, v []byte) {
	n := 8 + len(key) + len(v)
	if n > rowArenaChunk {
		delete(a.index, maphash.Bytes(a.seed, key)) // a read goes to the store
		return
	}
	last := len(a.chunks) - 1
	if last < 0 || len(a.chunks[last])+n > cap(a.chunks[last]) {
		if a.budget.add(rowArenaChunk) && a.held > 0 {
			a.reset()
		}
		a.chunks = append(a.chunks, a.mem.Alloc(rowArenaChunk)[:0])
		a.held += rowArenaChunk
		last = len(a.chunks) - 1
	}
	c := a.chunks[last]
	off := len(c)
	vlen := absentValue
	if v != nil {
		vlen = uint32(len(v))
	}
	c = binary.LittleEndian.AppendUint32(c, uint32(len(key)))
	c = binary.LittleEndian.AppendUint32(c, vlen)
	c = append(append(c, key...), v...)
	a.chunks[last] = c
	a.index[maphash.Bytes(a.seed, key)] = uint64(last)<<32 | uint64(off)
}

// get returns the row put at key (nil: deleted) and whether the arena
// knows it. The bytes are the arena's, valid until the next reset or
// release: nobody changes them.
func (a *rowArena) get(key []byte) (v []byte, ok bool) {
	at, ok := a.index[maphash.Bytes(a.seed, key)]
	if !ok {
		return nil, false
	}
	c := a.chunks[at>>32]
	off := uint32(at)
	klen := binary.LittleEndian.Uint32(c[off:])
	vlen := binary.LittleEndian.Uint32(c[off+4:])
	start := off + 8
	if !bytes.Equal(c[start:start+klen], key) {
		return nil, false // another key of the same hash
	}
	if vlen == absentValue {
		return nil, true
	}
	start += klen
	return c[start : start+vlen : start+vlen], true
}

// reset forgets every row and returns the buffers' memory.
func (a *rowArena) reset() {
	a.budget.add(-a.held)
	a.held = 0
	a.chunks = nil
	a.mem.Release()
	clear(a.index)
}
