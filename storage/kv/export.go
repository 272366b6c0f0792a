package kv

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/cockroachdb/pebble"
)

// exportMagic starts every export stream.
const exportMagic = "ordo-kv-1\n"

// maxExportField bounds a key or value read by Import.
const maxExportField = 256 << 20

// Export writes every key of r to w as a stream Import reads back.
func Export(r Reader, w io.Writer) error {
	ew, err := NewExportWriter(w)
	if err != nil {
		return err
	}
	if err := r.Scan(nil, nil, false, ew.Set); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	return ew.Close()
}

// ExportWriter writes an export stream (the one Export writes and Import
// reads back) key by key, for a caller that has the keys from elsewhere
// than a Reader: a snapshot file being restored.
type ExportWriter struct {
	bw  *bufio.Writer
	hdr [2 * binary.MaxVarintLen64]byte
}

// NewExportWriter writes the stream's magic to w.
func NewExportWriter(w io.Writer) (*ExportWriter, error) {
	ew := &ExportWriter{bw: bufio.NewWriterSize(w, 1<<20)}
	if _, err := ew.bw.WriteString(exportMagic); err != nil {
		return nil, err
	}
	return ew, nil
}

// Set writes one key and its value; Import takes them in any order.
func (ew *ExportWriter) Set(k, v []byte) error {
	if len(k) > maxExportField || len(v) > maxExportField {
		return fmt.Errorf("export: a key of %d bytes and a value of %d: more than %d", len(k), len(v), maxExportField)
	}
	n := binary.PutUvarint(ew.hdr[:], uint64(len(k)))
	n += binary.PutUvarint(ew.hdr[n:], uint64(len(v)))
	if _, err := ew.bw.Write(ew.hdr[:n]); err != nil {
		return err
	}
	if _, err := ew.bw.Write(k); err != nil {
		return err
	}
	_, err := ew.bw.Write(v)
	return err
}

// Close flushes the stream; it does not close the underlying writer.
func (ew *ExportWriter) Close() error { return ew.bw.Flush() }

// Import replaces every key of the store with the stream r, written by
// Export, and makes the result durable. The keys listed in last are written
// in a final synced batch after every other key, so a crash part-way leaves
// them absent: a caller that keeps its checkpoint there (the FSM's applied
// index) sees an incomplete import as no import.
func (s *Store) Import(r io.Reader, last ...[]byte) error {
	held := map[string][]byte{}
	for _, k := range last {
		held[string(k)] = nil
	}
	br := bufio.NewReaderSize(r, 1<<20)
	magic := make([]byte, len(exportMagic))
	if _, err := io.ReadFull(br, magic); err != nil || string(magic) != exportMagic {
		return fmt.Errorf("import: not an ordo kv export")
	}
	if err := s.clear(); err != nil {
		return fmt.Errorf("import: clear: %w", err)
	}
	b := s.db.NewBatch()
	for {
		kl, err := binary.ReadUvarint(br)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			b.Close()
			return fmt.Errorf("import: %w", err)
		}
		vl, err := binary.ReadUvarint(br)
		if err != nil || kl > maxExportField || vl > maxExportField {
			b.Close()
			return fmt.Errorf("import: bad record header")
		}
		buf := make([]byte, kl+vl)
		if _, err := io.ReadFull(br, buf); err != nil {
			b.Close()
			return fmt.Errorf("import: %w", err)
		}
		if _, ok := held[string(buf[:kl])]; ok {
			held[string(buf[:kl])] = buf[kl:]
			continue
		}
		if err := b.Set(buf[:kl], buf[kl:], nil); err != nil {
			b.Close()
			return err
		}
		if b.Len() > 4<<20 {
			if err := b.Commit(pebble.NoSync); err != nil {
				return fmt.Errorf("import: %w", err)
			}
			b = s.db.NewBatch()
		}
	}
	if err := b.Commit(pebble.Sync); err != nil {
		return fmt.Errorf("import: %w", err)
	}
	fin := s.db.NewBatch()
	for _, k := range last {
		if v := held[string(k)]; v != nil {
			if err := fin.Set(k, v, nil); err != nil {
				fin.Close()
				return err
			}
		}
	}
	if err := fin.Commit(pebble.Sync); err != nil {
		return fmt.Errorf("import: %w", err)
	}
	return nil
}

// clear deletes every key: the range ends just past the largest key, since
// no fixed bound sorts after every possible key.
func (s *Store) clear() error {
	it, err := s.db.NewIter(nil)
	if err != nil {
		return err
	}
	var end []byte
	if it.Last() {
		end = append(bytes.Clone(it.Key()), 0)
	}
	if err := it.Close(); err != nil || end == nil {
		return err
	}
	return s.db.DeleteRange([]byte{}, end, pebble.NoSync)
}
