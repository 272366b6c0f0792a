package events

import (
	"fmt"
	"io"
)

// Fields calls fn with the key and the encoded value of each entry of
// the msgpack map at the start of data (an encoded struct: Marshal writes
// structs as maps keyed by their msgpack tags), in order, decoding no
// value; a key that is not a string is an error. A reader that needs a few fields of a large row reads them
// with String and skips the rest for the cost of walking its bytes, with
// no reflection and no allocation per field. data is checked as
// checkStructure checks it; an error from fn ends the walk.
func Fields(data []byte, fn func(key, value []byte) error) error {
	if len(data) == 0 {
		return io.ErrUnexpectedEOF
	}
	var n, pos int
	switch c := data[0]; {
	case c >= 0x80 && c <= 0x8f:
		n, pos = int(c&0x0f), 1
	case c == 0xde || c == 0xdf:
		pos = 3 // map16: two bytes of length; map32: four
		if c == 0xdf {
			pos = 5
		}
		if len(data) < pos {
			return fmt.Errorf("msgpack map header: %w", io.ErrUnexpectedEOF)
		}
		n = bigEndian(data[1:pos])
	default:
		return fmt.Errorf("msgpack code %#x is not a map", c)
	}
	for range n {
		keyEnd, err := valueEnd(data, pos)
		if err != nil {
			return err
		}
		end, err := valueEnd(data, keyEnd)
		if err != nil {
			return err
		}
		key, ok := rawString(data[pos:keyEnd])
		if !ok {
			return fmt.Errorf("msgpack map key at %d is not a string", pos)
		}
		if err := fn(key, data[keyEnd:end]); err != nil {
			return err
		}
		pos = end
	}
	return nil
}

// String decodes the encoded string value raw (from Fields); nil decodes
// as "".
func String(raw []byte) (string, error) {
	if len(raw) == 1 && raw[0] == 0xc0 {
		return "", nil
	}
	s, ok := rawString(raw)
	if !ok {
		return "", fmt.Errorf("msgpack value %#x is not a string", raw[0])
	}
	return string(s), nil
}

// rawString returns the bytes of the encoded string raw, one whole value.
func rawString(raw []byte) ([]byte, bool) {
	if len(raw) == 0 {
		return nil, false
	}
	var n, pos int
	switch c := raw[0]; {
	case c >= 0xa0 && c <= 0xbf:
		n, pos = int(c&0x1f), 1
	case c >= 0xd9 && c <= 0xdb: // str8, str16, str32: 1, 2, 4 bytes of length
		pos = 1 + 1<<(c-0xd9)
		if len(raw) < pos {
			return nil, false
		}
		n = bigEndian(raw[1:pos])
	default:
		return nil, false
	}
	if len(raw)-pos != n {
		return nil, false
	}
	return raw[pos:], true
}

// bigEndian reads the unsigned big-endian length in b (1 to 4 bytes).
func bigEndian(b []byte) int {
	n := 0
	for _, x := range b {
		n = n<<8 | int(x)
	}
	return n
}
