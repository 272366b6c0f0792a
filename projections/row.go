package projections

import (
	"errors"
	"fmt"

	"github.com/ordoplane/ordo/projections/internal/layout"
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

func encodeRow(r Row) []byte { return layout.EncodeRow(r.CreateIndex, r.ModifyIndex, r.Value) }

func decodeRow(b []byte) (Row, error) {
	if len(b) < layout.RowHeader {
		return Row{}, fmt.Errorf("row of %d bytes is shorter than its header", len(b))
	}
	c, m := layout.RowHead(b)
	return Row{CreateIndex: c, ModifyIndex: m, Value: b[layout.RowHeader:]}, nil
}

// StatePrefixes are the key prefixes of everything a View reads: rows,
// table indexes, projection metadata and the applied index. A copy of a
// store's state needs these keys and no other (not the archive, nor the
// idempotency and rejection records).
func StatePrefixes() [][]byte {
	return [][]byte{[]byte("t/"), []byte("ti/"), []byte("pm/"), AppliedKey()}
}

// AppliedKey returns the key of the applied index (View.AppliedIndex).
func AppliedKey() []byte { return append([]byte(nil), layout.AppliedKey...) }

// KeyTable returns the table a state store key belongs to: a row's
// ("t/<table>\x00<key>", or the table's whole keyspace "t/<table>\x00")
// or a table index's ("ti/<table>"); false for every other key (metadata,
// the archive).
func KeyTable(key []byte) (string, bool) {
	tb := layout.KeyTable(key)
	return string(tb), tb != nil
}
