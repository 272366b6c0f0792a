package layout

import (
	"bytes"
	"encoding/binary"

	"github.com/ordoplane/ordo/storage/kv"
)

// RowsPrefix begins every row's key (RowKey).
var RowsPrefix = []byte("t/")

// RowPrefix appends to b the prefix every row key of table starts with.
func RowPrefix(b, table []byte) []byte {
	return append(append(append(b, RowsPrefix...), table...), 0)
}

// RowKey is "t/<table>\x00<key>".
func RowKey(table, key string) []byte {
	return AppendRowKey(make([]byte, 0, 3+len(table)+len(key)), table, key)
}

// AppendRowKey appends RowKey(table, key) to k.
func AppendRowKey[K string | []byte](k []byte, table string, key K) []byte {
	k = append(k, "t/"...)
	k = append(k, table...)
	k = append(k, 0)
	return append(k, key...)
}

// TablePrefix is the prefix of every row key of table.
func TablePrefix(table string) []byte { return RowKey(table, "") }

// TableIndexKey is where table's index, the last entry that changed it,
// is stored.
func TableIndexKey(table string) []byte { return append([]byte("ti/"), table...) }

// AppliedKey holds the applied index; never change it.
var AppliedKey = []byte("meta/applied")

// RestoredKey holds the raft index of the last operator restore.
var RestoredKey = []byte("meta/restored")

// MetaKey holds the metadata (name and version) of projection name.
func MetaKey(name string) []byte { return append([]byte("pm/"), name...) }

// RejectionKey holds the rejection of the entry at index.
func RejectionKey(index uint64) []byte { return kv.Uint64([]byte("rej/"), index) }

// GroupRejectionKey holds the rejection of command pos of the grouped
// entry at index.
func GroupRejectionKey(index uint64, pos int) []byte {
	return binary.BigEndian.AppendUint32(RejectionKey(index), uint32(pos))
}

// CommandKey holds the record of the command with idempotency key id.
func CommandKey(id string) []byte { return append([]byte("cmd/"), id...) }

// MarkerPrefix starts every rebuild marker; markers are local to a server
// and never travel in a raft snapshot.
const MarkerPrefix = "rb/"

// MarkerKey holds the marker of an operator's rebuild of projection name.
func MarkerKey(name string) []byte { return append([]byte(MarkerPrefix), name...) }

// ShadowPrefix is the keyspace where servers before the scratch store
// built projections, in the live store; nothing writes it now, and a
// server discards what an older one left there on start. Raft snapshots
// leave it out.
const ShadowPrefix = "sh/"

// IsLocal reports a key of what is local to one server: the shadow
// keyspace and the rebuild markers.
func IsLocal(k []byte) bool {
	return bytes.HasPrefix(k, []byte(ShadowPrefix)) || bytes.HasPrefix(k, []byte(MarkerPrefix))
}

// KeyTable returns the table's name within key, a row's
// ("t/<table>\x00<key>", or the table's whole keyspace "t/<table>\x00")
// or a table index's ("ti/<table>"); nil for a key of no table.
func KeyTable(key []byte) []byte {
	switch {
	case bytes.HasPrefix(key, []byte("t/")):
		rest := key[2:]
		if i := bytes.IndexByte(rest, 0); i >= 0 {
			return rest[:i]
		}
		return rest
	case bytes.HasPrefix(key, []byte("ti/")):
		return key[3:]
	}
	return nil
}
