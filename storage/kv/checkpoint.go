package kv

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/cockroachdb/pebble"
)

// Checkpoint writes a consistent copy of the store into dir, which must
// not exist: Pebble hard-links the store's immutable tables and copies its
// manifest, options and write-ahead log, so a checkpoint is cheap in time
// and, until the live store compacts those tables away, in space. The WAL
// is synced first, so the copy holds every batch committed before the call
// (and possibly some committed during it: each batch is there whole or not
// at all). Safe to call while other goroutines write.
func (s *Store) Checkpoint(dir string) error {
	s.gate.RLock()
	defer s.gate.RUnlock()
	// A file Replace ingested over what the memtables held waits behind
	// them until they are flushed (the store's format, see Open), and
	// Pebble (v1.1) leaves such a file out of a checkpoint while copying
	// the log that refers to it: the copy would not open. Flush it into
	// the LSM first; Replace cannot run meanwhile (the gate).
	if n := s.ingests.Load(); n != s.flushedIngests.Load() {
		if err := s.FlushMemtable(); err != nil {
			return fmt.Errorf("checkpoint %s: %w", dir, err)
		}
		s.flushedIngests.Store(n)
	}
	if err := s.db.Checkpoint(dir, pebble.WithFlushedWAL()); err != nil {
		return fmt.Errorf("checkpoint %s: %w", dir, err)
	}
	return nil
}

// FlushMemtable writes the store's memtable to a table and waits for it,
// so that the directory's write-ahead log holds nothing a later open must
// replay. Checkpoints are flushed once before they are kept, which makes
// every copy of them cheap to open.
func (s *Store) FlushMemtable() error {
	if err := s.db.Flush(); err != nil {
		return fmt.Errorf("flush memtable: %w", err)
	}
	return nil
}

// CopyCheckpoint makes dst a private, writable copy of the closed store in
// src (a checkpoint): tables are hard-linked, since Pebble never rewrites
// one, and every other file (manifest, options, log, markers) is copied, so
// opening and writing the copy never changes src. dst must not exist.
func CopyCheckpoint(src, dst string) error {
	entries, err := os.ReadDir(src)
	if err != nil {
		return fmt.Errorf("copy checkpoint: %w", err)
	}
	if err := os.Mkdir(dst, 0o755); err != nil {
		return fmt.Errorf("copy checkpoint: %w", err)
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			return fmt.Errorf("copy checkpoint: %s is not a regular file", filepath.Join(src, e.Name()))
		}
		from, to := filepath.Join(src, e.Name()), filepath.Join(dst, e.Name())
		if strings.HasSuffix(e.Name(), ".sst") {
			if err := os.Link(from, to); err == nil {
				continue
			}
			// Another file system (or no hard links): copy instead.
		}
		if err := copyFile(from, to); err != nil {
			return fmt.Errorf("copy checkpoint: %w", err)
		}
	}
	return nil
}

func copyFile(from, to string) (err error) {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := out.Close(); err == nil {
			err = cerr
		}
	}()
	_, err = io.Copy(out, in)
	return err
}
