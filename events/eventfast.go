package events

import (
	"bytes"
	"encoding/binary"
	"strings"

	"github.com/vmihailenco/msgpack/v5"
)

// decodeEventFast decodes data, an event as EncodeEvent writes it, into ev
// straight from the bytes: no msgpack decoder, one allocation for all of
// its strings but the payload type's and the keys' kinds, which are
// interned, and one for the payload (cut out whole, as a replay's reader
// does). A replay decodes every event of the archive, so this is most of
// a rebuild's reading. It returns false, leaving ev to be decoded the
// general way, for anything but the plain forms EncodeEvent writes (say a
// map key that is not a string, a value of an unexpected type, data cut
// short): decoded by both, an event is the same (FuzzDecodeEvent).
func decodeEventFast(data []byte, ev *Event) bool {
	d := fastReader{b: data}
	n, ok := d.mapLen()
	if !ok {
		return false
	}
	*ev = Event{}
	strs := stringSpans{src: data}
	for range n {
		key, ok := d.str()
		if !ok {
			return false
		}
		switch string(key) {
		case "ty":
			b, ok := d.str()
			if !ok {
				return false
			}
			if t, known := types[string(b)]; known {
				strs.intern(&ev.Type, t.Name)
			} else {
				strs.add(&ev.Type, b)
			}
		case "v":
			v, ok := d.uint()
			if !ok {
				return false
			}
			ev.Version = uint16(v)
		case "i":
			if ev.Index, ok = d.uint(); !ok {
				return false
			}
		case "s":
			v, ok := d.uint()
			if !ok {
				return false
			}
			ev.Seq = uint32(v)
		case "t":
			v, ok := d.uint() // an int64 decodes as the same bits
			if !ok {
				return false
			}
			ev.Time = int64(v)
		case "id":
			if !d.strTo(&strs, &ev.ID) {
				return false
			}
		case "a":
			if !d.strTo(&strs, &ev.Actor) {
				return false
			}
		case "c":
			if !d.strTo(&strs, &ev.CorrelationID) {
				return false
			}
		case "k":
			if ev.Keys, ok = d.keys(&strs); !ok {
				return false
			}
		case "p":
			if d.nil() {
				ev.Payload = nil
				continue
			}
			end, err := valueEnd(d.b, d.i)
			if err != nil {
				return false
			}
			ev.Payload = bytes.Clone(d.b[d.i:end])
			d.i = end
		default:
			if !d.skip() {
				return false
			}
		}
	}
	strs.set()
	return true
}

// keys reads an event's keys as decodeKeys does (nil for a nil, empty
// for an empty array).
func (d *fastReader) keys(strs *stringSpans) ([]Key, bool) {
	if d.nil() {
		return nil, true
	}
	n, ok := d.arrayLen()
	if !ok || n > len(d.b)-d.i {
		return nil, false
	}
	keys := make([]Key, n)
	for i := range keys {
		m, ok := d.mapLen()
		if !ok {
			return nil, false
		}
		for range m {
			f, ok := d.str()
			if !ok {
				return nil, false
			}
			switch string(f) {
			case "k":
				b, ok := d.str()
				if !ok {
					return nil, false
				}
				if k, known := internedKinds[string(b)]; known {
					strs.intern(&keys[i].Kind, k)
				} else {
					strs.add(&keys[i].Kind, b)
				}
			case "v":
				if !d.strTo(strs, &keys[i].Value) {
					return nil, false
				}
			default:
				if !d.skip() {
					return nil, false
				}
			}
		}
	}
	return keys, true
}

// internedKinds are the entity kinds events name, each its own string, so
// that a decoded key's kind allocates nothing. A kind missing here is
// decoded all the same.
var internedKinds = func() map[string]string {
	m := map[string]string{}
	for _, k := range []string{KindACLPolicy, KindACLToken, KindACLRole, KindAlloc, KindComponent, KindVolume, KindPlugin,
		KindDeployment, KindNamespace, KindServer, KindEval, KindJob, KindRootKey, KindProvider, KindNodeRequest,
		KindInstance, KindTenant, KindNode, KindVariable} {
		m[k] = k
	}
	return m
}()

// stringSpans gathers the strings of a decoded value, in the order read,
// to be made in one allocation (set). It holds a few on the stack.
type stringSpans struct {
	src   []byte // what the strings are read from
	arr   [24]span
	n     int
	more  []span
	total int
}

// span is a string to set: src[off:off+n] made a string, or interned
// when in is set.
type span struct {
	dst      *string
	off, n   uint32
	in       bool
	interned string
}

func (s *stringSpans) push(sp span) {
	if s.n < len(s.arr) {
		s.arr[s.n] = sp
		s.n++
		return
	}
	s.more = append(s.more, sp)
}

// add sets dst to b, a slice of src, in its turn.
func (s *stringSpans) add(dst *string, b []byte) {
	off := 0
	if len(b) > 0 {
		off = cap(s.src) - cap(b) // where b starts in src
	}
	s.push(span{dst: dst, off: uint32(off), n: uint32(len(b))})
	s.total += len(b)
}

// intern sets dst to interned, in its turn.
func (s *stringSpans) intern(dst *string, interned string) {
	s.push(span{dst: dst, in: true, interned: interned})
}

// set makes the strings gathered and sets each, in the order read.
func (s *stringSpans) set() {
	spans := append(s.arr[:s.n:s.n], s.more...)
	var all string
	if s.total > 0 {
		var sb strings.Builder
		sb.Grow(s.total)
		for _, sp := range spans {
			sb.Write(s.src[sp.off : sp.off+sp.n])
		}
		all = sb.String()
	}
	at := uint32(0)
	for _, sp := range spans {
		if sp.in {
			*sp.dst = sp.interned
			continue
		}
		*sp.dst = all[at : at+sp.n]
		at += sp.n
	}
}

// bytesOf returns the reader of dec when it reads a byte slice
// (decodeFrom), for a type that decodes straight from bytes: it reads
// from the reader's position with a fastReader, and moves the reader
// past what it read when it could decode the value, else leaves the
// value to reflection.
func bytesOf(dec *msgpack.Decoder) *sliceReader {
	r, _ := dec.Buffered().(*sliceReader)
	return r
}

// decodeSlice decodes the array at d into *s as reflection does (a nil
// is a nil slice, an empty array an empty one; elements are decoded into
// those *s holds, its capacity reused), each element with elem.
func decodeSlice[T any](d *fastReader, s *[]T, elem func(*T, *fastReader) bool) bool {
	if d.nil() {
		*s = nil
		return true
	}
	n, ok := d.arrayLen()
	if !ok || n > len(d.b)-d.i {
		return false
	}
	v := *s
	if n == 0 && v == nil {
		*s = []T{}
		return true
	}
	if cap(v) >= n {
		v = v[:n]
	} else {
		v = v[:cap(v)]
		v = append(v, make([]T, n-len(v))...)
	}
	for i := range n {
		if !elem(&v[i], d) {
			return false
		}
	}
	*s = v
	return true
}

// fields reads a map's entries (not a nil), calling field with each key
// while it returns true; the value is field's to read.
func (d *fastReader) fields(field func(key []byte) bool) bool {
	n, ok := d.mapLen()
	if !ok {
		return false
	}
	for range n {
		key, ok := d.str()
		if !ok || !field(key) {
			return false
		}
	}
	return true
}

// fastReader reads msgpack values from bytes, accepting what the msgpack
// decoder accepts for the types read (ok false for anything else).
type fastReader struct {
	b []byte
	i int
}

// nil reports (and reads past) a nil.
func (d *fastReader) nil() bool {
	if d.i < len(d.b) && d.b[d.i] == 0xc0 {
		d.i++
		return true
	}
	return false
}

// n reads a big-endian unsigned integer of size bytes.
func (d *fastReader) n(size int) (uint64, bool) {
	if len(d.b)-d.i < size {
		return 0, false
	}
	var v uint64
	switch size {
	case 1:
		v = uint64(d.b[d.i])
	case 2:
		v = uint64(binary.BigEndian.Uint16(d.b[d.i:]))
	case 4:
		v = uint64(binary.BigEndian.Uint32(d.b[d.i:]))
	default:
		v = binary.BigEndian.Uint64(d.b[d.i:])
	}
	d.i += size
	return v, true
}

// code reads a value's first byte.
func (d *fastReader) code() (byte, bool) {
	if d.i >= len(d.b) {
		return 0, false
	}
	c := d.b[d.i]
	d.i++
	return c, true
}

// mapLen reads a map's header (not a nil).
func (d *fastReader) mapLen() (int, bool) {
	c, ok := d.code()
	switch {
	case !ok:
		return 0, false
	case c >= 0x80 && c <= 0x8f:
		return int(c & 0x0f), true
	case c == 0xde:
		n, ok := d.n(2)
		return int(n), ok
	case c == 0xdf:
		n, ok := d.n(4)
		return int(n), ok
	}
	return 0, false
}

// arrayLen reads an array's header (not a nil).
func (d *fastReader) arrayLen() (int, bool) {
	c, ok := d.code()
	switch {
	case !ok:
		return 0, false
	case c >= 0x90 && c <= 0x9f:
		return int(c & 0x0f), true
	case c == 0xdc:
		n, ok := d.n(2)
		return int(n), ok
	case c == 0xdd:
		n, ok := d.n(4)
		return int(n), ok
	}
	return 0, false
}

// str reads a string (or bytes; nil is empty) without copying it.
func (d *fastReader) str() ([]byte, bool) {
	c, ok := d.code()
	var n uint64
	switch {
	case !ok:
		return nil, false
	case c >= 0xa0 && c <= 0xbf:
		n = uint64(c & 0x1f)
	case c == 0xc0:
		return nil, true
	case c == 0xd9 || c == 0xc4:
		n, ok = d.n(1)
	case c == 0xda || c == 0xc5:
		n, ok = d.n(2)
	case c == 0xdb || c == 0xc6:
		n, ok = d.n(4)
	default:
		return nil, false
	}
	if !ok || n > uint64(len(d.b)-d.i) {
		return nil, false
	}
	s := d.b[d.i : d.i+int(n)]
	d.i += int(n)
	return s, true
}

// strTo reads a string into dst through strs.
func (d *fastReader) strTo(strs *stringSpans, dst *string) bool {
	b, ok := d.str()
	if ok {
		strs.add(dst, b)
	}
	return ok
}

// uint reads an integer as the msgpack decoder's DecodeUint64 does (nil
// is 0, a negative one its two's complement); DecodeInt64 reads the same
// bits.
func (d *fastReader) uint() (uint64, bool) {
	c, ok := d.code()
	switch {
	case !ok:
		return 0, false
	case c <= 0x7f || c >= 0xe0:
		return uint64(int8(c)), true
	case c == 0xc0:
		return 0, true
	case c == 0xcc:
		return d.n(1)
	case c == 0xcd:
		return d.n(2)
	case c == 0xce:
		return d.n(4)
	case c == 0xcf, c == 0xd3:
		return d.n(8)
	case c == 0xd0:
		v, ok := d.n(1)
		return uint64(int8(v)), ok
	case c == 0xd1:
		v, ok := d.n(2)
		return uint64(int16(v)), ok
	case c == 0xd2:
		v, ok := d.n(4)
		return uint64(int32(v)), ok
	}
	return 0, false
}

// skip reads past a value.
func (d *fastReader) skip() bool {
	end, err := valueEnd(d.b, d.i)
	if err != nil {
		return false
	}
	d.i = end
	return true
}
