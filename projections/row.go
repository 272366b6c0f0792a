package projections

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/ordoplane/ordo/storage/kv"
)

// ErrNotFound is returned for a missing row.
var ErrNotFound = errors.New("ordo: not found")

// Row is a stored projection row: the indexes of the entries that created
// and last modified it, and the projection's encoded value.
type Row struct {
	CreateIndex uint64
	ModifyIndex uint64
	Value       []byte
}

const rowHeader = 16

func encodeRow(r Row) []byte {
	b := make([]byte, rowHeader, rowHeader+len(r.Value))
	binary.BigEndian.PutUint64(b, r.CreateIndex)
	binary.BigEndian.PutUint64(b[8:], r.ModifyIndex)
	return append(b, r.Value...)
}

// rowHead returns the indexes of the row b, at least a header long.
func rowHead(b []byte) Row {
	return Row{CreateIndex: binary.BigEndian.Uint64(b), ModifyIndex: binary.BigEndian.Uint64(b[8:])}
}

func decodeRow(b []byte) (Row, error) {
	if len(b) < rowHeader {
		return Row{}, fmt.Errorf("row of %d bytes is shorter than its header", len(b))
	}
	return Row{
		CreateIndex: binary.BigEndian.Uint64(b),
		ModifyIndex: binary.BigEndian.Uint64(b[8:]),
		Value:       b[rowHeader:],
	}, nil
}

// rowsPrefix begins every row's key (rowKey).
var rowsPrefix = []byte("t/")

// rowPrefix appends to b the prefix every row key of table starts with.
func rowPrefix(b, table []byte) []byte {
	return append(append(append(b, rowsPrefix...), table...), 0)
}

// rowKey is "t/<table>\x00<key>".
func rowKey(table, key string) []byte {
	return appendRowKey(make([]byte, 0, 3+len(table)+len(key)), table, key)
}

// appendRowKey appends rowKey(table, key) to k.
func appendRowKey[K string | []byte](k []byte, table string, key K) []byte {
	k = append(k, "t/"...)
	k = append(k, table...)
	k = append(k, 0)
	return append(k, key...)
}

func tablePrefix(table string) []byte { return rowKey(table, "") }

func tableIndexKey(table string) []byte { return append([]byte("ti/"), table...) }

var appliedKey = []byte("meta/applied")

// restoredKey holds the raft index of the last operator restore
// (FSM.RestoredAt).
var restoredKey = []byte("meta/restored")

func projectionMetaKey(name string) []byte { return append([]byte("pm/"), name...) }

func rejectionKey(index uint64) []byte { return kv.Uint64([]byte("rej/"), index) }

func commandKey(id string) []byte { return append([]byte("cmd/"), id...) }

// StatePrefixes are the key prefixes of everything a View reads: rows,
// table indexes, projection metadata and the applied index. A copy of a
// store's state needs these keys and no other (not the archive, nor the
// idempotency and rejection records).
func StatePrefixes() [][]byte {
	return [][]byte{[]byte("t/"), []byte("ti/"), []byte("pm/"), AppliedKey()}
}

// AppliedKey returns the key of the applied index (View.AppliedIndex).
func AppliedKey() []byte { return append([]byte(nil), appliedKey...) }
