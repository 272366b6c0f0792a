package archive

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/ordoplane/ordo/storage/kv"
)

var (
	prefix  = []byte("log/")
	lenKey  = []byte("meta/archive/len")
	lastKey = []byte("meta/archive/last")
)

// Key returns the archive key of the event at (index, seq).
func Key(index uint64, seq uint32) []byte {
	k := make([]byte, 0, len(prefix)+12)
	k = append(k, prefix...)
	k = binary.BigEndian.AppendUint64(k, index)
	return binary.BigEndian.AppendUint32(k, seq)
}

// Append stores one encoded event. The caller records the new length and
// last index with SetCounters in the same batch.
func Append(w kv.Writer, index uint64, seq uint32, data []byte) error {
	if err := w.Set(Key(index, seq), data); err != nil {
		return fmt.Errorf("archive append %d/%d: %w", index, seq, err)
	}
	return nil
}

// SetCounters records how many events the archive holds and the index of
// the newest one.
func SetCounters(w kv.Writer, length, last uint64) error {
	if err := w.Set(lenKey, kv.Uint64Value(length)); err != nil {
		return err
	}
	return w.Set(lastKey, kv.Uint64Value(last))
}

// Len returns how many events the archive holds.
func Len(r kv.Reader) (uint64, error) { return readUint(r, lenKey) }

// First returns the index of the first event r's archive holds, 0 when
// it holds none.
func First(r kv.Reader) (uint64, error) {
	var first uint64
	err := Scan(r, 1, 0, func(index uint64, _ uint32, _ []byte) error {
		first = index
		return kv.ErrStop
	})
	if err != nil && !errors.Is(err, kv.ErrStop) {
		return 0, err
	}
	return first, nil
}

// Last returns the index of the newest archived event, 0 when empty.
func Last(r kv.Reader) (uint64, error) { return readUint(r, lastKey) }

func readUint(r kv.Reader, key []byte) (uint64, error) {
	v, err := r.Get(key)
	if errors.Is(err, kv.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("archive %s: %w", key, err)
	}
	return kv.ParseUint64(v), nil
}

// Scan calls fn for every event with index in [from, to] in commit order;
// to == 0 means no upper bound. data is valid only during fn. fn may return
// kv.ErrStop to end early.
func Scan(r kv.Reader, from, to uint64, fn func(index uint64, seq uint32, data []byte) error) error {
	lower := Key(from, 0)
	upper := kv.PrefixEnd(prefix)
	if to > 0 && to < ^uint64(0) {
		upper = Key(to+1, 0)
	}
	return r.Scan(lower, upper, false, func(k, v []byte) error {
		if len(k) != len(prefix)+12 {
			return fmt.Errorf("archive: malformed key %x", k)
		}
		idx := binary.BigEndian.Uint64(k[len(prefix):])
		seq := binary.BigEndian.Uint32(k[len(prefix)+8:])
		return fn(idx, seq, v)
	})
}
