package projections

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/storage/archive"
	"github.com/ordoplane/ordo/storage/kv"
)

// RebuildStats reports what a rebuild read and applied.
type RebuildStats struct {
	Events  uint64
	Entries uint64
	Last    uint64
}

// rebuildBatchEntries is how many entries a rebuild commits per batch.
const rebuildBatchEntries = 2048

// Rebuild replays the archive in src into the empty store dst, applying
// every event to projs exactly as the FSM did, up to index to (0: all).
// progress, when set, is called after each committed batch.
func Rebuild(src kv.Reader, dst *kv.Store, projs []Projection, to uint64, progress func(RebuildStats)) (RebuildStats, error) {
	var st RebuildStats
	b := dst.Batch()
	if err := CheckVersions(NewView(b), projs); err != nil {
		b.Close()
		return st, err
	}
	var tx *Tx
	flush := func() error {
		if tx != nil {
			if _, err := tx.bumpTables(); err != nil {
				return err
			}
			if err := b.Set(appliedKey, kv.Uint64Value(tx.index)); err != nil {
				return err
			}
			tx = nil
			st.Entries++
		}
		if st.Entries%rebuildBatchEntries != 0 {
			return nil
		}
		if err := b.Commit(); err != nil {
			return err
		}
		b = dst.Batch()
		if progress != nil {
			progress(st)
		}
		return nil
	}
	err := archive.Scan(src, 1, to, func(index uint64, seq uint32, data []byte) error {
		ev, err := events.DecodeEvent(data)
		if err != nil {
			return fmt.Errorf("archive %d/%d: %w", index, seq, err)
		}
		if tx != nil && tx.index != index {
			if err := flush(); err != nil {
				return err
			}
		}
		if tx == nil {
			tx = newTx(b, index, ev.Time)
		}
		for _, p := range projs {
			if err := p.Apply(tx, ev); err != nil {
				return fmt.Errorf("rebuild %s at %d: %w", p.Name(), index, err)
			}
		}
		st.Events++
		st.Last = index
		return nil
	})
	if err == nil {
		err = flush()
	}
	if err != nil {
		b.Close()
		return st, err
	}
	if err := b.Commit(); err != nil {
		return st, err
	}
	if progress != nil {
		progress(st)
	}
	return st, nil
}

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
