package kv

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/objstorage/objstorageprovider"
	"github.com/cockroachdb/pebble/sstable"
	"github.com/cockroachdb/pebble/vfs"
)

// tableFilesDir is the directory, inside a store's, where table files are
// written before they are ingested; Pebble ignores it.
const tableFilesDir = "ingest"

// TableFile is a run of writes, in key order, built into a table file
// beside the store (no write-ahead log, no memtable) to be ingested whole
// by Store.Replace: the way to write millions of keys at once without
// holding up the store's other writers while they are copied.
//
// Keys given to Set and Delete must strictly increase; ranges given to
// DeleteRange must not overlap and must come in order of their start. A
// range deletion removes the keys the store held before the ingest, not
// the file's own.
type TableFile struct {
	path     string
	filtered bool
	w        *sstable.Writer
	last     []byte
	lastEnd  []byte
	keys     int
	done     bool
}

var tableFileSeq atomic.Uint64

// ErrHalfReplaced is a Replace that ingested its file but failed to commit
// the batch after it: the store holds the file's writes without the
// batch's.
var ErrHalfReplaced = errors.New("kv: table file ingested, the batch after it failed")

// NewTableFile starts a table file for this store.
func (s *Store) NewTableFile() (*TableFile, error) { return s.newTableFile(true) }

// NewScanTableFile starts a table file for this store without Bloom
// filters: for keys read only by scans, which filters never help.
func (s *Store) NewScanTableFile() (*TableFile, error) { return s.newTableFile(false) }

func (s *Store) newTableFile(filter bool) (*TableFile, error) {
	dir := filepath.Join(s.dir, tableFilesDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("table file: %w", err)
	}
	path := filepath.Join(dir, fmt.Sprintf("%d-%d.sst", os.Getpid(), tableFileSeq.Add(1)))
	f, err := vfs.Default.Create(path)
	if err != nil {
		return nil, fmt.Errorf("table file: %w", err)
	}
	opts := s.opts.MakeWriterOptions(0, s.db.FormatMajorVersion().MaxTableFormat())
	if !filter {
		opts.FilterPolicy = nil
	}
	return &TableFile{path: path, filtered: filter, w: sstable.NewWriter(objstorageprovider.NewFileWritable(f), opts)}, nil
}

// Filtered reports whether the file has Bloom filters (NewTableFile) or
// not (NewScanTableFile).
func (t *TableFile) Filtered() bool { return t.filtered }

// Keys returns how many keys and ranges were written.
func (t *TableFile) Keys() int { return t.keys }

func (t *TableFile) point(key []byte) error {
	if t.last != nil && bytes.Compare(key, t.last) <= 0 {
		return fmt.Errorf("table file: key %q not after %q", key, t.last)
	}
	t.last = append(t.last[:0], key...)
	t.keys++
	return nil
}

// Set writes value at key.
func (t *TableFile) Set(key, value []byte) error {
	if err := t.point(key); err != nil {
		return err
	}
	return t.w.Set(key, value)
}

// Delete deletes key.
func (t *TableFile) Delete(key []byte) error {
	if err := t.point(key); err != nil {
		return err
	}
	return t.w.Delete(key)
}

// DeleteRange deletes the keys in [lower, upper) that the store holds
// when the file is ingested.
func (t *TableFile) DeleteRange(lower, upper []byte) error {
	if bytes.Compare(lower, upper) >= 0 {
		return fmt.Errorf("table file: empty range [%q, %q)", lower, upper)
	}
	if t.lastEnd != nil && bytes.Compare(lower, t.lastEnd) < 0 {
		return fmt.Errorf("table file: range [%q, %q) overlaps or precedes one ending at %q", lower, upper, t.lastEnd)
	}
	t.lastEnd = append(t.lastEnd[:0], upper...)
	t.keys++
	return t.w.DeleteRange(lower, upper)
}

// Finish writes out and syncs the file; nothing can be added after. Replace
// finishes a file not yet finished, but finishing it beforehand takes the
// sync of a large file out of the time Replace holds its callers.
func (t *TableFile) Finish() error {
	if t.done {
		return nil
	}
	t.done = true
	if err := t.w.Close(); err != nil {
		return fmt.Errorf("table file %s: %w", t.path, err)
	}
	return nil
}

// Discard abandons the file (one Replace has not taken) and removes it.
func (t *TableFile) Discard() {
	if !t.done {
		t.done = true
		t.w.Close()
	}
	os.Remove(t.path)
}

// Replace ingests the table files ts in one atomic step, then commits wb
// durably: a reader (Get, Scan, Snapshot, Checkpoint) sees the store as it
// was before both or after both, never between, because readers wait
// while Replace runs; it returns how long they were held. The files cover
// key ranges that do not overlap (written side by side, on several
// cores); one with nothing in it is skipped. The ingest is atomic and
// durable on its own; wb is what must follow it (say, writes newer than
// the files'). Writers must not commit meanwhile (the caller excludes
// them): they could land between the two. An ingest that overlaps what
// the memtables hold is queued behind them, not made to wait for their
// flush (the store's format: see Open).
func (s *Store) Replace(ts []*TableFile, wb *WriteBatch) (held time.Duration, err error) {
	defer wb.Close()
	var paths []string
	for _, t := range ts {
		defer t.Discard()
		if err := t.Finish(); err != nil {
			return 0, err
		}
		if t.keys > 0 {
			paths = append(paths, t.path)
		}
	}
	s.gate.Lock()
	start := s.clock.Now()
	defer func() {
		s.gate.Unlock()
		held = s.clock.Now().Sub(start)
	}()
	if len(paths) > 0 {
		if err := s.db.Ingest(paths); err != nil {
			return 0, fmt.Errorf("ingest %d table files: %w", len(paths), err)
		}
		s.ingests.Add(1)
	}
	if s.replaced != nil {
		if err := s.replaced(); err != nil {
			return 0, fmt.Errorf("%w: %w", ErrHalfReplaced, err)
		}
	}
	if err := wb.Commit(true); err != nil {
		return 0, fmt.Errorf("%w: %w", ErrHalfReplaced, err)
	}
	return 0, nil
}

// SetReplaceHook makes Replace call fn between its ingest and its batch,
// with readers held back: the point a crash test stops a process at, or
// where a test fails the batch (an error from fn fails Replace with
// ErrHalfReplaced, the batch not committed, as a disk error would). nil
// removes it.
func (s *Store) SetReplaceHook(fn func() error) { s.replaced = fn }

// removeTableFiles deletes table files a stop left behind.
func removeTableFiles(dir string) error {
	return os.RemoveAll(filepath.Join(dir, tableFilesDir))
}
