package export

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/ordoplane/ordo/storage/framing"
)

// Magic starts every history file.
const Magic = "ORDOLOG\n"

// Version is the format version this package writes and the newest it
// reads.
const Version uint16 = 1

// Record tags.
const (
	tagState   byte = 'S'
	tagEvent   byte = 'E'
	tagTrailer byte = 'T'
)

// Limits a Reader enforces before reading a length-prefixed field.
const (
	// MaxHeader bounds the JSON header.
	MaxHeader = 1 << 20
	// MaxRecord bounds an event's envelope, or a state row's key plus value.
	MaxRecord = 64 << 20
	// maxKey bounds a state row's key.
	maxKey = 64 << 10
)

// The errors a Reader returns wrap one of these.
var (
	// ErrMagic: the stream does not start with Magic.
	ErrMagic = errors.New("ordo: not an ordo history file")
	// ErrVersion: the format version is one this ordo does not read.
	ErrVersion = errors.New("ordo: unsupported history file version")
	// ErrTruncated: the stream ends before the trailer.
	ErrTruncated = errors.New("ordo: history file is truncated")
	// ErrCorrupt: a record, the header or the trailer is malformed, or the
	// records disagree with the header.
	ErrCorrupt = errors.New("ordo: history file is corrupt")
	// ErrChecksum: the SHA-256 in the trailer does not match the content.
	ErrChecksum = errors.New("ordo: history file checksum mismatch")
)

// Where Header.ClusterID comes from.
const (
	// ClusterFirstServer: the id of the first server registered in the
	// archive — the one that bootstrapped the cluster. Every server of the
	// cluster derives the same id from the log.
	ClusterFirstServer = "first-server"
	// ClusterExportingServer: the archive registers no server (a generated
	// archive); the exporting server's node id stands in.
	ClusterExportingServer = "exporting-server"
)

// Header describes a history file. It is stored as JSON.
type Header struct {
	// FormatVersion is the file's format version (set by the Reader from
	// the binary version field; a Writer always writes Version).
	FormatVersion uint16 `json:"-"`
	// ClusterID names the cluster the events come from; ClusterIDSource
	// says how it was found (ClusterFirstServer, ClusterExportingServer).
	// Ordo has no minted cluster id: the first registered server's id is
	// the stable stand-in.
	ClusterID       string
	ClusterIDSource string
	// Server is the node id of the server that exported the file.
	Server string `json:",omitempty"`
	// From and To are the range of raft indexes asked for; To 0 means up
	// to the end of the archive.
	From, To uint64
	// FirstIndex and LastIndex are the indexes of the first and last event
	// in the file, 0 when it holds none.
	FirstIndex, LastIndex uint64
	// Events is how many events the file holds.
	Events uint64
	// StateIndex, when not 0, says the file starts with StateRows rows:
	// every projection as it stood at that index (From-1), so a replay of
	// the slice shows the whole cluster and not only what the slice
	// touched.
	StateIndex uint64 `json:",omitempty"`
	StateRows  uint64 `json:",omitempty"`
	// Created is when the file was written (the exporter's clock).
	Created time.Time
	// OrdoVersion is the version of the ordo that wrote it.
	OrdoVersion string `json:",omitempty"`
}

// format is the history file's framing.
var format = framing.Format{Name: "history file", Magic: Magic, Version: Version, MaxHeader: MaxHeader,
	ErrMagic: ErrMagic, ErrVersion: ErrVersion, ErrTruncated: ErrTruncated, ErrCorrupt: ErrCorrupt,
	ErrChecksum: ErrChecksum}

// Writer writes a history file: the header, then WriteState rows, then
// WriteEvent records in commit order, then Close writes the trailer. It
// checks the records against the header as Reader will.
type Writer struct {
	fw   *framing.Writer
	chk  checker
	err  error
	done bool
	buf  [17]byte
}

// NewWriter writes the magic, the version and h to w. h's counts (Events,
// FirstIndex, LastIndex, StateRows) must be those of the records that will
// follow; Close fails otherwise.
func NewWriter(w io.Writer, h Header) (*Writer, error) {
	fw, err := format.NewWriter(w, 256<<10, h)
	if err != nil {
		return nil, err
	}
	return &Writer{fw: fw, chk: checker{h: h}}, nil
}

// WriteState writes one row of the base state; rows come before events.
func (w *Writer) WriteState(key, value []byte) error {
	if w.err != nil {
		return w.err
	}
	if err := w.chk.state(len(key), len(value)); err != nil {
		return err
	}
	w.buf[0] = tagState
	binary.BigEndian.PutUint32(w.buf[1:], uint32(len(key)))
	binary.BigEndian.PutUint32(w.buf[5:], uint32(len(value)))
	w.fw.Write(w.buf[:9])
	w.fw.Write(key)
	w.err = w.fw.Write(value)
	return w.err
}

// WriteEvent writes one archived event, data as the archive holds it at
// (index, seq).
func (w *Writer) WriteEvent(index uint64, seq uint32, data []byte) error {
	if w.err != nil {
		return w.err
	}
	if err := w.chk.event(index, seq, len(data)); err != nil {
		return err
	}
	w.buf[0] = tagEvent
	binary.BigEndian.PutUint64(w.buf[1:], index)
	binary.BigEndian.PutUint32(w.buf[9:], seq)
	binary.BigEndian.PutUint32(w.buf[13:], uint32(len(data)))
	w.fw.Write(w.buf[:17])
	w.err = w.fw.Write(data)
	return w.err
}

// Close checks the counts against the header, writes the trailer (its
// tag, then the digest of every byte before it) and flushes. It does not
// close the underlying writer.
func (w *Writer) Close() error {
	if w.done {
		return w.err
	}
	w.done = true
	if w.err != nil {
		return w.err
	}
	if err := w.chk.end(); err != nil {
		w.err = err
		return err
	}
	w.err = w.fw.Finish([]byte{tagTrailer})
	return w.err
}

// checker holds the rules records obey, for the Writer and the Reader.
type checker struct {
	h            Header
	events       uint64
	states       uint64
	first, last  uint64
	lastSeq      uint32
	sawEvent     bool
	recordNumber uint64
}

func (c *checker) state(klen, vlen int) error {
	c.recordNumber++
	switch {
	case c.h.StateIndex == 0:
		return fmt.Errorf("%w: a state row in a file whose header has no StateIndex", ErrCorrupt)
	case c.sawEvent:
		return fmt.Errorf("%w: a state row after the first event", ErrCorrupt)
	case klen == 0 || klen > maxKey:
		return fmt.Errorf("%w: state row key of %d bytes", ErrCorrupt, klen)
	case klen+vlen > MaxRecord:
		return fmt.Errorf("%w: state row of %d bytes, more than %d", ErrCorrupt, klen+vlen, MaxRecord)
	}
	c.states++
	if c.states > c.h.StateRows {
		return fmt.Errorf("%w: more state rows than the %d the header announces", ErrCorrupt, c.h.StateRows)
	}
	return nil
}

func (c *checker) event(index uint64, seq uint32, n int) error {
	c.recordNumber++
	switch {
	case n > MaxRecord:
		return fmt.Errorf("%w: event %d/%d of %d bytes, more than %d", ErrCorrupt, index, seq, n, MaxRecord)
	case index == 0:
		return fmt.Errorf("%w: event at index 0", ErrCorrupt)
	case c.sawEvent && (index < c.last || index == c.last && seq <= c.lastSeq):
		return fmt.Errorf("%w: event %d/%d after %d/%d: not in commit order", ErrCorrupt, index, seq, c.last, c.lastSeq)
	case index < c.h.FirstIndex || index > c.h.LastIndex:
		return fmt.Errorf("%w: event %d outside the header's range [%d, %d]", ErrCorrupt, index, c.h.FirstIndex, c.h.LastIndex)
	}
	if !c.sawEvent {
		c.first = index
	}
	c.sawEvent = true
	c.last, c.lastSeq = index, seq
	c.events++
	if c.events > c.h.Events {
		return fmt.Errorf("%w: more events than the %d the header announces", ErrCorrupt, c.h.Events)
	}
	return nil
}

func (c *checker) end() error {
	switch {
	case c.events != c.h.Events:
		return fmt.Errorf("%w: %d events, the header announces %d", ErrCorrupt, c.events, c.h.Events)
	case c.states != c.h.StateRows:
		return fmt.Errorf("%w: %d state rows, the header announces %d", ErrCorrupt, c.states, c.h.StateRows)
	case c.events > 0 && (c.first != c.h.FirstIndex || c.last != c.h.LastIndex):
		return fmt.Errorf("%w: events span [%d, %d], the header says [%d, %d]", ErrCorrupt, c.first, c.last, c.h.FirstIndex, c.h.LastIndex)
	case c.events == 0 && (c.h.FirstIndex != 0 || c.h.LastIndex != 0):
		return fmt.Errorf("%w: no events, the header says [%d, %d]", ErrCorrupt, c.h.FirstIndex, c.h.LastIndex)
	}
	return nil
}
