package kv

import "encoding/binary"

// PrefixEnd returns the smallest key greater than every key with prefix, or
// nil when there is none.
func PrefixEnd(prefix []byte) []byte {
	end := append([]byte(nil), prefix...)
	for i := len(end) - 1; i >= 0; i-- {
		end[i]++
		if end[i] != 0 {
			return end[:i+1]
		}
	}
	return nil
}

// Key joins parts into a key, each followed by a 0x00 separator except the last.
func Key(parts ...string) []byte {
	n := 0
	for _, p := range parts {
		n += len(p) + 1
	}
	k := make([]byte, 0, n)
	for i, p := range parts {
		if i > 0 {
			k = append(k, 0)
		}
		k = append(k, p...)
	}
	return k
}

// Uint64 appends v big-endian to b, so numeric order is byte order.
func Uint64(b []byte, v uint64) []byte { return binary.BigEndian.AppendUint64(b, v) }

// Uint64Value encodes v as an 8-byte big-endian value.
func Uint64Value(v uint64) []byte { return Uint64(nil, v) }

// ParseUint64 decodes an 8-byte big-endian value; short input yields 0.
func ParseUint64(b []byte) uint64 {
	if len(b) < 8 {
		return 0
	}
	return binary.BigEndian.Uint64(b)
}
