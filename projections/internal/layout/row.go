package layout

import "encoding/binary"

// RowHeader is the length of the header every row value starts with: the
// create and the modify index of the row, big-endian.
const RowHeader = 16

// EncodeRow returns a row value: the header of create and modify, then
// value.
func EncodeRow(create, modify uint64, value []byte) []byte {
	b := make([]byte, RowHeader, RowHeader+len(value))
	binary.BigEndian.PutUint64(b, create)
	binary.BigEndian.PutUint64(b[8:], modify)
	return append(b, value...)
}

// RowHead returns the create and modify index of the row value b, at
// least RowHeader long.
func RowHead(b []byte) (create, modify uint64) {
	return binary.BigEndian.Uint64(b), binary.BigEndian.Uint64(b[8:])
}
