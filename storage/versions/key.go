package versions

import (
	"encoding/binary"
	"errors"
)

// A version row's key is rowPrefix, the user key in an order-preserving
// escape (0x00 becomes 0x00 0xFF) closed by 0x00 0x01, then the bitwise
// complement of the version's index, big-endian: the versions of a key sort
// together, newest first, and keys sort as their user keys do.
var rowPrefix = []byte("v")

const (
	escape     = 0x00
	escaped0   = 0xFF
	terminator = 0x01
)

// errBadKey is a version key that does not decode.
var errBadKey = errors.New("versions: malformed version key")

// appendEscaped appends the escaped form of key, without terminator.
func appendEscaped(b, key []byte) []byte {
	for _, c := range key {
		if c == escape {
			b = append(b, escape, escaped0)
			continue
		}
		b = append(b, c)
	}
	return b
}

// keyPrefix is what every version of key starts with.
func keyPrefix(key []byte) []byte {
	return appendKeyPrefix(make([]byte, 0, len(rowPrefix)+len(key)+2+8), key)
}

func appendKeyPrefix(b, key []byte) []byte {
	return append(appendEscaped(append(b, rowPrefix...), key), escape, terminator)
}

// versionKey is the key of key's version at index.
func versionKey(key []byte, index uint64) []byte { return appendVersionKey(nil, key, index) }

// appendVersionKey appends the key of key's version at index to b.
func appendVersionKey(b, key []byte, index uint64) []byte {
	return binary.BigEndian.AppendUint64(appendKeyPrefix(b, key), ^index)
}

// boundKey is where the versions of keys at or after key begin (lower
// bound) or before key end (upper bound): the escaped key with no
// terminator sorts before every version of key and after every version of
// a smaller key.
func boundKey(key []byte) []byte {
	return appendEscaped(append([]byte(nil), rowPrefix...), key)
}

// parseKey splits a version key into the user key and the index.
func parseKey(k []byte) (key []byte, index uint64, err error) {
	if len(k) < len(rowPrefix)+2+8 || string(k[:len(rowPrefix)]) != string(rowPrefix) {
		return nil, 0, errBadKey
	}
	body := k[len(rowPrefix) : len(k)-8]
	key = make([]byte, 0, len(body))
	for i := 0; i < len(body); i++ {
		c := body[i]
		if c != escape {
			key = append(key, c)
			continue
		}
		if i+1 >= len(body) {
			return nil, 0, errBadKey
		}
		switch body[i+1] {
		case escaped0:
			key = append(key, escape)
			i++
		case terminator:
			if i+2 != len(body) {
				return nil, 0, errBadKey
			}
			return key, ^binary.BigEndian.Uint64(k[len(k)-8:]), nil
		default:
			return nil, 0, errBadKey
		}
	}
	return nil, 0, errBadKey
}

// A version row's value is one tag byte and, for a write, the value.
const (
	tagSet    = 's'
	tagDelete = 'd'
)

func encodeValue(tag byte, v []byte) []byte {
	out := make([]byte, 0, len(v)+1)
	return append(append(out, tag), v...)
}

// decodeValue returns the value a version row holds, and whether the
// version is a deletion.
func decodeValue(v []byte) (value []byte, deleted bool, err error) {
	if len(v) == 0 {
		return nil, false, errors.New("versions: empty version value")
	}
	switch v[0] {
	case tagSet:
		return v[1:], false, nil
	case tagDelete:
		return nil, true, nil
	}
	return nil, false, errors.New("versions: unknown version tag")
}
