package export

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/rebuild"
	"github.com/ordoplane/ordo/storage/archive"
	"github.com/ordoplane/ordo/storage/kv"
)

// LoadStats reports what Load read.
type LoadStats struct {
	Header    Header
	StateRows uint64
	Events    uint64
	// Checksum is the file's SHA-256, hex.
	Checksum string
}

// Load replays the history file at path into dst, an empty store: the
// base state rows if the file has them, then every event applied to projs
// (rebuild.Rebuild, as the FSM applied them), then the events copied
// into dst's archive, so dst serves reads, the log and entity histories
// up to the file's last index. It checks the file whole (Verify) before
// it writes anything, then reads it twice or three times more, checking it
// again each time it reaches the end; on error dst may hold a partial
// replay and should be discarded.
func Load(path string, dst *kv.Store, projs []projections.Projection) (LoadStats, error) {
	var st LoadStats
	empty := true
	if err := dst.Scan(nil, nil, false, func(_, _ []byte) error { empty = false; return kv.ErrStop }); err != nil {
		return st, err
	}
	if !empty {
		return st, errors.New("load history file: the destination store is not empty")
	}
	// Check the whole file first, so damage is reported as such (a
	// checksum mismatch, a truncation) and not as whatever an event
	// damaged in the middle fails to decode as.
	f, err := os.Open(path)
	if err != nil {
		return st, err
	}
	sum, err := Verify(bufio.NewReaderSize(f, 1<<20))
	f.Close()
	if err != nil {
		return st, fmt.Errorf("%s: %w", path, err)
	}
	h := sum.Header
	st.Header = h
	src := &fileSource{path: path}
	if h.StateRows > 0 {
		if st.StateRows, err = LoadState(path, dst); err != nil {
			return st, err
		}
	}
	rs, err := rebuild.Rebuild(src, dst, projs, 0, nil)
	if err != nil && h.StateRows > 0 && errors.Is(err, projections.ErrRebuildNeeded) {
		return st, fmt.Errorf("load %s: its base state was written by other projection versions than this ordo's (export from index 1, or with the state left out): %w", path, err)
	}
	if err != nil {
		return st, fmt.Errorf("load %s: %w", path, err)
	}
	st.Events = rs.Events
	if st.Checksum, err = copyArchive(path, dst); err != nil {
		return st, err
	}
	return st, nil
}

// LoadState writes only the base state rows of the history file at path
// into dst (the projections as they stood at Header.StateIndex; nothing
// for a file without them) and returns how many it wrote. It does not
// check the file beyond them: Load does.
func LoadState(path string, dst *kv.Store) (uint64, error) {
	return readFile(path, func(r *Reader) (uint64, error) {
		l := dst.Loader(0)
		defer l.Close()
		var n uint64
		for {
			rec, err := r.Next()
			if err == io.EOF || err == nil && rec.Kind != KindState {
				break // the first event: the state is whole (or there are no events)
			}
			if err != nil {
				return n, err
			}
			if err := l.Set(rec.Key, rec.Value); err != nil {
				return n, err
			}
			n++
		}
		return n, l.Commit()
	})
}

// copyArchive writes the file's events into dst's archive with its
// counters, and returns the file's checksum.
func copyArchive(path string, dst *kv.Store) (string, error) {
	var sum string
	_, err := readFile(path, func(r *Reader) (uint64, error) {
		l := dst.Loader(0)
		defer l.Close()
		var n, last uint64
		for {
			rec, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				return n, err
			}
			if rec.Kind != KindEvent {
				continue
			}
			if err := l.Set(archive.Key(rec.Index, rec.Seq), rec.Data); err != nil {
				return n, err
			}
			n, last = n+1, rec.Index
		}
		if err := l.Commit(); err != nil {
			return n, err
		}
		counters := dst.Batch()
		if err := archive.SetCounters(counters, n, last); err != nil {
			counters.Close()
			return n, err
		}
		sum = r.Checksum()
		return n, counters.Commit() // releases counters
	})
	return sum, err
}

// readFile opens path and hands its Reader to fn.
func readFile(path string, fn func(*Reader) (uint64, error)) (uint64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	r, err := NewReader(f)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	n, err := fn(r)
	if err != nil && err != io.EOF {
		return n, fmt.Errorf("%s: %w", path, err)
	}
	return n, nil
}

// fileSource is a kv.Reader holding only the archive keys of a history
// file, read from the file on each Scan, so rebuild.Rebuild replays a
// file as it replays a store. Each Scan that reaches the end of the file
// checks it whole.
type fileSource struct{ path string }

var _ kv.Reader = (*fileSource)(nil)

// Get implements kv.Reader: the file has no point reads.
func (s *fileSource) Get([]byte) ([]byte, error) { return nil, kv.ErrNotFound }

// Scan implements kv.Reader over the file's events, in order.
func (s *fileSource) Scan(lower, upper []byte, reverse bool, fn func(k, v []byte) error) error {
	if reverse {
		return errors.New("history file: reverse scans are not supported")
	}
	_, err := readFile(s.path, func(r *Reader) (uint64, error) {
		for {
			rec, err := r.Next()
			if err != nil {
				return 0, err
			}
			if rec.Kind != KindEvent {
				continue
			}
			k := archive.Key(rec.Index, rec.Seq)
			if lower != nil && bytes.Compare(k, lower) < 0 {
				continue
			}
			if upper != nil && bytes.Compare(k, upper) >= 0 {
				return 0, nil
			}
			if err := fn(k, rec.Data); err != nil {
				if errors.Is(err, kv.ErrStop) {
					return 0, nil
				}
				return 0, err
			}
		}
	})
	return err
}
