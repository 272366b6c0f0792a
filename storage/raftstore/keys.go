package raftstore

import "encoding/binary"

// Key layout: log entries under prefixLog followed by the 8-byte big-endian
// index, stable keys under prefixStable followed by the key.
const (
	prefixLog    = 'l'
	prefixStable = 's'
	logKeyLen    = 1 + 8
)

var (
	// logLower and logUpper bound every log key: [logLower, logUpper).
	logLower = []byte{prefixLog}
	logUpper = []byte{prefixLog + 1}
)

// appendLogKey appends the key of the entry at index to dst.
func appendLogKey(dst []byte, index uint64) []byte {
	return binary.BigEndian.AppendUint64(append(dst, prefixLog), index)
}

// putLogKey writes the key of the entry at index into dst[:logKeyLen].
func putLogKey(dst []byte, index uint64) {
	dst[0] = prefixLog
	binary.BigEndian.PutUint64(dst[1:logKeyLen], index)
}

// logKeyIndex returns the index held in a log key, or false if k is not one.
func logKeyIndex(k []byte) (uint64, bool) {
	if len(k) != logKeyLen || k[0] != prefixLog {
		return 0, false
	}
	return binary.BigEndian.Uint64(k[1:]), true
}

// logEndKey returns the exclusive upper bound of a range ending at index max
// inclusive.
func logEndKey(max uint64) []byte {
	if max == ^uint64(0) {
		return logUpper
	}
	return appendLogKey(nil, max+1)
}

// stableKey returns the Pebble key of the stable key k.
func stableKey(k []byte) []byte {
	out := make([]byte, 0, 1+len(k))
	return append(append(out, prefixStable), k...)
}
