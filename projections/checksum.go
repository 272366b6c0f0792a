package projections

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"

	"github.com/ordoplane/ordo/storage/kv"
)

// Checksum hashes every table of p: its index and its rows in key order.
// Two stores with equal checksums hold identical projections.
func Checksum(r kv.Reader, p Projection) ([32]byte, error) {
	h := sha256.New()
	v := NewView(r)
	var n [8]byte
	for _, t := range p.Tables() {
		idx, err := v.TableIndex(t)
		if err != nil {
			return [32]byte{}, err
		}
		h.Write([]byte(t))
		binary.BigEndian.PutUint64(n[:], idx)
		h.Write(n[:])
		err = v.Scan(t, "", false, func(key string, row Row) error {
			binary.BigEndian.PutUint64(n[:], uint64(len(key)))
			h.Write(n[:])
			h.Write([]byte(key))
			h.Write(encodeRow(row))
			return nil
		})
		if err != nil {
			return [32]byte{}, fmt.Errorf("checksum %s: %w", t, err)
		}
	}
	var out [32]byte
	copy(out[:], h.Sum(nil))
	return out, nil
}
