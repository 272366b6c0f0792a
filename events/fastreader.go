package events

import (
	"encoding/binary"

	"github.com/vmihailenco/msgpack/v5"
)

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
func (d *fastReader) mapLen() (int, bool) { return d.length(0x80, 0xde, 0xdf) }

// arrayLen reads an array's header (not a nil).
func (d *fastReader) arrayLen() (int, bool) { return d.length(0x90, 0xdc, 0xdd) }

// length reads the header of a map or an array: fix (the 16 codes from
// fix on hold the length) or code16 or code32 followed by it.
func (d *fastReader) length(fix, code16, code32 byte) (int, bool) {
	c, ok := d.code()
	var n uint64
	switch {
	case !ok:
		return 0, false
	case c >= fix && c <= fix+0x0f:
		return int(c & 0x0f), true
	case c == code16:
		n, ok = d.n(2)
	case c == code32:
		n, ok = d.n(4)
	default:
		return 0, false
	}
	return int(n), ok
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

// uintTo reads an unsigned integer into dst (see uint).
func (d *fastReader) uintTo(dst *uint64) bool {
	v, ok := d.uint()
	if ok {
		*dst = v
	}
	return ok
}

// intTo reads an integer into dst: the same bits as uint reads.
func (d *fastReader) intTo(dst *int64) bool {
	v, ok := d.uint()
	if ok {
		*dst = int64(v)
	}
	return ok
}

// intFieldTo reads an integer into dst, an int.
func (d *fastReader) intFieldTo(dst *int) bool {
	v, ok := d.uint()
	if ok {
		*dst = int(int64(v))
	}
	return ok
}

// reflected decodes the value at d into v (a pointer to a field) by
// reflection.
func (d *fastReader) reflected(v any) bool {
	end, err := valueEnd(d.b, d.i)
	if err != nil || decodeFrom(d.b[d.i:end], v, false, true) != nil {
		return false
	}
	d.i = end
	return true
}

// boolTo reads a bool (nil is false) into dst.
func (d *fastReader) boolTo(dst *bool) bool {
	c, ok := d.code()
	switch {
	case !ok:
		return false
	case c == 0xc0 || c == 0xc2:
		*dst = false
	case c == 0xc3:
		*dst = true
	default:
		return false
	}
	return true
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

// bytesOf returns the reader of dec when it reads a byte slice
// (decodeFrom), for a type that decodes straight from bytes: it reads
// from the reader's position with a fastReader, and moves the reader
// past what it read when it could decode the value, else leaves the
// value to reflection.
func bytesOf(dec *msgpack.Decoder) *sliceReader {
	r, _ := dec.Buffered().(*sliceReader)
	return r
}
