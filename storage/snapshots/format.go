package snapshots

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/ordoplane/ordo/storage/framing"
)

// Magic starts every snapshot file.
const Magic = "ORDOSNP\n"

// Version is the format version this package writes and the newest it
// reads.
const Version uint16 = 1

// Record tags.
const (
	tagRow     byte = 'R'
	tagTrailer byte = 'T'
)

// Limits on what a file may hold, checked before a length-prefixed field
// is read.
const (
	// MaxHeader bounds the JSON header.
	MaxHeader = 1 << 20
	// MaxKey bounds a row's key.
	MaxKey = 64 << 10
	// MaxValue bounds a row's value.
	MaxValue = 256 << 20
)

// The errors a Reader returns wrap one of these.
var (
	// ErrMagic: the stream does not start with Magic.
	ErrMagic = errors.New("ordo: not an ordo snapshot file")
	// ErrVersion: the format version is one this ordo does not read.
	ErrVersion = errors.New("ordo: unsupported snapshot file version")
	// ErrTruncated: the stream ends before its trailer.
	ErrTruncated = errors.New("ordo: snapshot file is truncated")
	// ErrCorrupt: a record, the header or the trailer is malformed.
	ErrCorrupt = errors.New("ordo: snapshot file is corrupt")
	// ErrChecksum: the SHA-256 in the trailer does not match the content.
	ErrChecksum = errors.New("ordo: snapshot file checksum mismatch")
)

// Header describes a snapshot file. It is stored as JSON.
type Header struct {
	// FormatVersion is the file's format version (set by the Reader from
	// the binary version field; a Writer always writes Version).
	FormatVersion uint16 `json:"-"`
	// ClusterID names the cluster the state comes from (the id of the
	// server that bootstrapped it, as history files name it).
	ClusterID string
	// Server is the node id of the server that saved the file.
	Server string `json:",omitempty"`
	// Index is the raft index the state was applied through; LastTime is
	// the leader time (Unix nanoseconds) of the entry at that index, 0
	// when the archive holds none.
	Index    uint64
	LastTime int64 `json:",omitempty"`
	// Projections is the version of each projection the state holds.
	Projections map[string]int `json:",omitempty"`
	// Created is when the file was written (the saving server's clock).
	Created time.Time
	// OrdoVersion is the version of the ordo that wrote it.
	OrdoVersion string `json:",omitempty"`
}

// format is the snapshot file's framing.
var format = framing.Format{Name: "snapshot file", Magic: Magic, Version: Version, MaxHeader: MaxHeader,
	ErrMagic: ErrMagic, ErrVersion: ErrVersion, ErrTruncated: ErrTruncated, ErrCorrupt: ErrCorrupt,
	ErrChecksum: ErrChecksum}

// Writer writes a snapshot file: the header, then Row records in key
// order, then Close writes the trailer.
type Writer struct {
	fw   *framing.Writer
	rows uint64
	last []byte
	err  error
	done bool
	pre  [9]byte
}

// NewWriter writes the magic, the version and h to w.
func NewWriter(w io.Writer, h Header) (*Writer, error) {
	fw, err := format.NewWriter(w, 1<<20, h)
	if err != nil {
		return nil, err
	}
	return &Writer{fw: fw}, nil
}

// Row writes one key of the state store and its value; keys must come in
// strictly ascending order.
func (w *Writer) Row(key, value []byte) error {
	if w.err != nil {
		return w.err
	}
	if w.done {
		return errors.New("snapshot file: Row after Close")
	}
	if err := checkRow(w.last, w.rows, key, len(value)); err != nil {
		w.err = err
		return err
	}
	w.pre[0] = tagRow
	binary.BigEndian.PutUint32(w.pre[1:], uint32(len(key)))
	binary.BigEndian.PutUint32(w.pre[5:], uint32(len(value)))
	w.fw.Write(w.pre[:])
	w.fw.Write(key)
	w.err = w.fw.Write(value)
	w.last = append(w.last[:0], key...)
	w.rows++
	return w.err
}

// Rows returns how many rows were written.
func (w *Writer) Rows() uint64 { return w.rows }

// Close writes the trailer — its tag and the row count, covered by the
// digest that follows them — and flushes; it does not close the
// underlying writer.
func (w *Writer) Close() error {
	if w.done || w.err != nil {
		return w.err
	}
	w.done = true
	tr := make([]byte, 0, 9)
	tr = append(tr, tagTrailer)
	tr = binary.BigEndian.AppendUint64(tr, w.rows)
	w.fw.Write(tr)
	w.err = w.fw.Finish(nil)
	return w.err
}

// checkRow holds a row to the rules a Reader checks: a key of 1 to MaxKey
// bytes after the last one, a value of at most MaxValue.
func checkRow(last []byte, rows uint64, key []byte, vlen int) error {
	switch {
	case len(key) == 0 || len(key) > MaxKey:
		return fmt.Errorf("%w: row %d: a key of %d bytes (1 to %d)", ErrCorrupt, rows+1, len(key), MaxKey)
	case vlen > MaxValue:
		return fmt.Errorf("%w: row %d: a value of %d bytes, more than %d", ErrCorrupt, rows+1, vlen, MaxValue)
	case rows > 0 && bytes.Compare(key, last) <= 0:
		return fmt.Errorf("%w: row %d: key %q not after %q", ErrCorrupt, rows+1, key, last)
	}
	return nil
}
