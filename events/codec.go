package events

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"sync"

	"github.com/vmihailenco/msgpack/v5"
)

// MaxEncodedSize bounds what the decoders accept, so a corrupt length cannot
// make them allocate without limit.
const MaxEncodedSize = 64 << 20

var encPool = sync.Pool{New: func() any {
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	// Go map iteration order is random; sorted keys make equal values
	// encode to equal bytes.
	enc.SetSortMapKeys(true)
	return &pooledEncoder{buf: &buf, enc: enc}
}}

type pooledEncoder struct {
	buf *bytes.Buffer
	enc *msgpack.Encoder
}

func encode(v any) ([]byte, error) { return AppendMarshal(nil, v) }

// AppendMarshal appends Marshal's encoding of v to dst: a caller that
// copies the bytes somewhere anyway (a Pebble batch) encodes into a
// buffer it reuses. A FieldEncoder writes itself onto dst.
func AppendMarshal(dst []byte, v any) ([]byte, error) {
	if fe, ok := v.(FieldEncoder); ok && !nilPointer(v) {
		return appendFields(dst, fe)
	}
	return appendEncoded(dst, v)
}

// appendEncoded appends v's encoding by a pooled msgpack encoder to dst.
func appendEncoded(dst []byte, v any) ([]byte, error) {
	pe := encPool.Get().(*pooledEncoder)
	defer encPool.Put(pe)
	pe.buf.Reset()
	if err := pe.enc.Encode(v); err != nil {
		return dst, err
	}
	return append(dst, pe.buf.Bytes()...), nil
}

// Marshal encodes v as msgpack with map keys sorted, so equal values always
// encode to equal bytes. Payloads and projection rows are encoded with it:
// msgpack.Marshal writes maps in random order, which would make rebuilt
// projections differ from live ones.
func Marshal(v any) ([]byte, error) { return encode(v) }

// Unmarshal decodes data into v as msgpack.Unmarshal does (without
// checking its structure first: a projection's row, which ordo wrote),
// reading from the bytes themselves, so a value with a decoder of its own
// from bytes (an allocation) uses it.
func Unmarshal(data []byte, v any) error { return decodeFrom(data, v, false, true) }

// decodeFrom decodes data into v; with slicePayloads, an event's payload
// is cut out of data by its structure rather than copied byte by byte by
// the decoder (decodePayload): for values with no decoder of their own
// around their events (an entry, an event). checked says data's structure
// was checked already, as part of a value holding it.
func decodeFrom(data []byte, v any, slicePayloads, checked bool) error {
	if len(data) > MaxEncodedSize {
		return fmt.Errorf("%d bytes exceeds %d", len(data), MaxEncodedSize)
	}
	if !checked {
		if err := checkStructure(data); err != nil {
			return err
		}
	}
	if !slicePayloads && decodeDirect(data, v) {
		return nil
	}
	dec := msgpack.GetDecoder()
	defer msgpack.PutDecoder(dec)
	dec.Reset(&sliceReader{b: data, slicePayloads: slicePayloads})
	return dec.Decode(v)
}

// selfDecoder is a value whose DecodeMsgpack first decodes it straight
// from the bytes the decoder reads (decodeFast: the plain forms ordo
// writes), and only if that fails by reflection: an allocation, an
// evaluation, a client update, the payloads that carry them.
type selfDecoder interface {
	msgpack.CustomDecoder
	decodeFast(d *fastReader) bool
}

// decodeDirect does what v's DecodeMsgpack would try first, when v is a
// selfDecoder, without a msgpack decoder's setup and dispatch to it
// (BenchmarkDecodeClientUpdate 771 → 450 ns), or reads a FieldDecoder;
// it reports whether that decoded data, else the decoder takes it as
// before (by reflection, for a FieldDecoder).
func decodeDirect(data []byte, v any) bool {
	switch f := v.(type) {
	case selfDecoder:
		return !reflect.ValueOf(v).IsNil() && f.decodeFast(&fastReader{b: data})
	case FieldDecoder:
		return ReadFields(data, f)
	}
	return false
}

// sliceReader reads a byte slice, as bytes.Reader does, and lets
// decodePayload take a value from it whole.
type sliceReader struct {
	b             []byte
	i             int
	slicePayloads bool
}

func (r *sliceReader) Read(p []byte) (int, error) {
	if r.i >= len(r.b) {
		return 0, io.EOF
	}
	n := copy(p, r.b[r.i:])
	r.i += n
	return n, nil
}

func (r *sliceReader) ReadByte() (byte, error) {
	if r.i >= len(r.b) {
		return 0, io.EOF
	}
	c := r.b[r.i]
	r.i++
	return c, nil
}

func (r *sliceReader) UnreadByte() error {
	if r.i == 0 {
		return errors.New("events: unread at the start")
	}
	r.i--
	return nil
}

// takeValue returns a copy of the msgpack value at the reader's position
// and moves past it.
func (r *sliceReader) takeValue() ([]byte, error) {
	end, err := valueEnd(r.b, r.i)
	if err != nil {
		return nil, err
	}
	v := bytes.Clone(r.b[r.i:end])
	r.i = end
	return v, nil
}

// EncodeEntry encodes e for the raft log.
func EncodeEntry(e *Entry) ([]byte, error) {
	b, err := encode(e)
	if err != nil {
		return nil, fmt.Errorf("encode entry %s: %w", e.CommandID, err)
	}
	return b, nil
}

// DecodeEntry decodes an entry written by EncodeEntry.
func DecodeEntry(data []byte) (*Entry, error) {
	var e Entry
	if err := decodeFrom(data, &e, true, false); err != nil {
		return nil, fmt.Errorf("decode entry: %w", err)
	}
	return &e, nil
}

// EncodeEvent encodes ev for the archive.
func EncodeEvent(ev *Event) ([]byte, error) {
	b, err := encode(ev)
	if err != nil {
		return nil, fmt.Errorf("encode event %s: %w", ev.ID, err)
	}
	return b, nil
}

// DecodeEvent decodes an event written by EncodeEvent.
func DecodeEvent(data []byte) (*Event, error) {
	var ev Event
	if len(data) <= MaxEncodedSize && decodeEventFast(data, &ev) {
		return &ev, nil
	}
	if err := decodeFrom(data, &ev, true, false); err != nil {
		return nil, fmt.Errorf("decode event: %w", err)
	}
	return &ev, nil
}

// DecodeEventPredecoded is DecodeEvent followed by Predecode, for a
// replay's reader: the payload, cut out of data whose whole structure
// DecodeEvent checked, is not checked a second time.
func DecodeEventPredecoded(data []byte) (*Event, error) {
	ev, err := DecodeEvent(data)
	if err != nil {
		return nil, err
	}
	predecode(ev, true)
	return ev, nil
}

// sameBytes reports whether a and b are the same non-empty bytes in
// memory (not merely equal).
func sameBytes(a, b []byte) bool {
	return len(a) > 0 && len(a) == len(b) && &a[0] == &b[0]
}

// maxNesting bounds how deeply arrays and maps may nest in decoded input.
const maxNesting = 256

// checkStructure walks the first msgpack value in data without recursion or
// allocation per element, and fails when it is truncated, nests deeper than
// maxNesting, or claims more elements than there are bytes left. The msgpack
// decoder trusts claimed lengths (it preallocates slices of them: nine bytes
// could ask for terabytes) and skips unknown values recursively (deep nesting
// overflows the stack), so input is checked before it reaches the decoder.
func checkStructure(data []byte) error {
	_, err := valueEnd(data, 0)
	return err
}

// CheckStructure fails unless data starts with a msgpack value safe to
// hand a msgpack decoder (checkStructure): for bytes ordo did not write
// itself, before they reach msgpack.Unmarshal.
func CheckStructure(data []byte) error { return checkStructure(data) }

// valueEnd returns where the msgpack value at data[pos:] ends, with
// checkStructure's checks.
func valueEnd(data []byte, pos int) (int, error) {
	left := make([]uint64, 1, 16) // values still to read at each open level
	left[0] = 1
	uintN := func(n int) (uint64, error) {
		if len(data)-pos < n {
			return 0, io.ErrUnexpectedEOF
		}
		var v uint64
		for _, b := range data[pos : pos+n] {
			v = v<<8 | uint64(b)
		}
		pos += n
		return v, nil
	}
	for len(left) > 0 {
		if left[len(left)-1] == 0 {
			left = left[:len(left)-1]
			continue
		}
		left[len(left)-1]--
		if pos >= len(data) {
			return 0, io.ErrUnexpectedEOF
		}
		c := data[pos]
		pos++
		var skip, children uint64
		var err error
		switch {
		case c <= 0x7f || c >= 0xe0: // fixint
		case c <= 0x8f: // fixmap
			children = 2 * uint64(c&0x0f)
		case c <= 0x9f: // fixarray
			children = uint64(c & 0x0f)
		case c <= 0xbf: // fixstr
			skip = uint64(c & 0x1f)
		case c == 0xc0 || c == 0xc2 || c == 0xc3: // nil, false, true
		case c == 0xc4 || c == 0xd9: // bin8, str8
			skip, err = uintN(1)
		case c == 0xc5 || c == 0xda: // bin16, str16
			skip, err = uintN(2)
		case c == 0xc6 || c == 0xdb: // bin32, str32
			skip, err = uintN(4)
		case c == 0xc7: // ext8: length, type, data
			skip, err = uintN(1)
			skip++
		case c == 0xc8: // ext16
			skip, err = uintN(2)
			skip++
		case c == 0xc9: // ext32
			skip, err = uintN(4)
			skip++
		case c == 0xca || c == 0xce || c == 0xd2: // float32, uint32, int32
			skip = 4
		case c == 0xcb || c == 0xcf || c == 0xd3: // float64, uint64, int64
			skip = 8
		case c == 0xcc || c == 0xd0: // uint8, int8
			skip = 1
		case c == 0xcd || c == 0xd1: // uint16, int16
			skip = 2
		case c >= 0xd4 && c <= 0xd8: // fixext 1, 2, 4, 8, 16: type, data
			skip = 1 + 1<<(c-0xd4)
		case c == 0xdc: // array16
			children, err = uintN(2)
		case c == 0xdd: // array32
			children, err = uintN(4)
		case c == 0xde: // map16
			children, err = uintN(2)
			children *= 2
		case c == 0xdf: // map32
			children, err = uintN(4)
			children *= 2
		default: // 0xc1 is never used
			return 0, fmt.Errorf("invalid msgpack code %#x at %d", c, pos-1)
		}
		if err != nil {
			return 0, err
		}
		if skip > uint64(len(data)-pos) {
			return 0, io.ErrUnexpectedEOF
		}
		pos += int(skip)
		if children > 0 {
			// Every value takes at least one byte.
			if children > uint64(len(data)-pos) {
				return 0, io.ErrUnexpectedEOF
			}
			if len(left) > maxNesting {
				return 0, fmt.Errorf("msgpack nests deeper than %d", maxNesting)
			}
			left = append(left, children)
		}
	}
	return pos, nil
}
