package mirror

import "encoding/binary"

// mpReader reads msgpack values straight from bytes, for the record fast
// path (rawrecord.go): no decoder, no allocation. It accepts the forms
// the msgpack decoder accepts for the Go types read, and reports ok false
// for anything else (a value cut short, a code of an unexpected type),
// upon which the caller builds the record the general way.
type mpReader struct {
	b []byte
	i int
}

// nil reports (and reads past) a nil.
func (d *mpReader) nil() bool {
	if d.i < len(d.b) && d.b[d.i] == 0xc0 {
		d.i++
		return true
	}
	return false
}

// code reads a value's first byte.
func (d *mpReader) code() (byte, bool) {
	if d.i >= len(d.b) {
		return 0, false
	}
	c := d.b[d.i]
	d.i++
	return c, true
}

// n reads a big-endian unsigned integer of size bytes.
func (d *mpReader) n(size int) (uint64, bool) {
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

// mapLen reads a map's header (not a nil).
func (d *mpReader) mapLen() (int, bool) { return d.length(0x80, 0xde, 0xdf) }

// arrayLen reads an array's header (not a nil).
func (d *mpReader) arrayLen() (int, bool) { return d.length(0x90, 0xdc, 0xdd) }

// length reads the header of a map or an array: fix (the 16 codes from
// fix on hold the length), or code16 or code32 followed by it. A length
// greater than the bytes left (each element takes one at least) is
// refused.
func (d *mpReader) length(fix, code16, code32 byte) (int, bool) {
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
	return int(n), ok && n <= uint64(len(d.b)-d.i)
}

// str reads a string or bytes without copying them; isNil reports a nil
// (which a string decodes from as "" and bytes as nil).
func (d *mpReader) str() (s []byte, isNil, ok bool) {
	c, ok := d.code()
	var n uint64
	switch {
	case !ok:
		return nil, false, false
	case c >= 0xa0 && c <= 0xbf:
		n = uint64(c & 0x1f)
	case c == 0xc0:
		return nil, true, true
	case c == 0xd9 || c == 0xc4:
		n, ok = d.n(1)
	case c == 0xda || c == 0xc5:
		n, ok = d.n(2)
	case c == 0xdb || c == 0xc6:
		n, ok = d.n(4)
	default:
		return nil, false, false
	}
	if !ok || n > uint64(len(d.b)-d.i) {
		return nil, false, false
	}
	s = d.b[d.i : d.i+int(n) : d.i+int(n)]
	d.i += int(n)
	return s, false, true
}

// uint reads an integer as the msgpack decoder's DecodeUint64 does (nil
// is 0, a negative one its two's complement); DecodeInt64 reads the same
// bits.
func (d *mpReader) uint() (uint64, bool) {
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

// bool reads a bool (nil is false).
func (d *mpReader) bool() (v, ok bool) {
	c, ok := d.code()
	switch {
	case !ok:
		return false, false
	case c == 0xc0 || c == 0xc2:
		return false, true
	case c == 0xc3:
		return true, true
	}
	return false, false
}

// maxNesting bounds how deeply skip follows arrays and maps, as the
// events package bounds what its decoders accept.
const maxNesting = 256

// skip reads past one value, however nested (up to maxNesting).
func (d *mpReader) skip() bool {
	left := 1 // values still to read at the current level and above
	depth := 0
	var stack [maxNesting]int
	for left > 0 {
		c, ok := d.code()
		if !ok {
			return false
		}
		left--
		var size uint64 // bytes of payload to pass over
		var elems uint64
		switch {
		case c <= 0x7f || c >= 0xe0 || c == 0xc0 || c == 0xc2 || c == 0xc3:
		case c >= 0xa0 && c <= 0xbf:
			size = uint64(c & 0x1f)
		case c >= 0x80 && c <= 0x8f:
			elems = 2 * uint64(c&0x0f)
		case c >= 0x90 && c <= 0x9f:
			elems = uint64(c & 0x0f)
		case c == 0xcc || c == 0xd0:
			size = 1
		case c == 0xcd || c == 0xd1:
			size = 2
		case c == 0xce || c == 0xd2 || c == 0xca:
			size = 4
		case c == 0xcf || c == 0xd3 || c == 0xcb:
			size = 8
		case c == 0xd9 || c == 0xc4:
			size, ok = d.n(1)
		case c == 0xda || c == 0xc5:
			size, ok = d.n(2)
		case c == 0xdb || c == 0xc6:
			size, ok = d.n(4)
		case c == 0xdc:
			elems, ok = d.n(2)
		case c == 0xdd:
			elems, ok = d.n(4)
		case c == 0xde:
			elems, ok = d.n(2)
			elems *= 2
		case c == 0xdf:
			elems, ok = d.n(4)
			elems *= 2
		case c == 0xd4 || c == 0xd5 || c == 0xd6 || c == 0xd7 || c == 0xd8: // fixext 1, 2, 4, 8, 16
			size = 1 + 1<<(c-0xd4)
		case c == 0xc7:
			size, ok = d.n(1)
			size++
		case c == 0xc8:
			size, ok = d.n(2)
			size++
		case c == 0xc9:
			size, ok = d.n(4)
			size++
		default:
			return false
		}
		if !ok || size > uint64(len(d.b)-d.i) || elems > uint64(len(d.b)-d.i) {
			return false
		}
		d.i += int(size)
		if elems > 0 {
			if depth == maxNesting {
				return false
			}
			stack[depth] = left
			depth++
			left = int(elems)
		}
		for left == 0 && depth > 0 {
			depth--
			left = stack[depth]
		}
	}
	return true
}
