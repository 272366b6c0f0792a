package export

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
)

// Kind says what a Record holds.
type Kind byte

// The kinds of Record.
const (
	KindState Kind = Kind(tagState)
	KindEvent Kind = Kind(tagEvent)
)

// Record is one record of a history file. Its byte slices are valid only
// until the next call to Next.
type Record struct {
	Kind Kind
	// Index, Seq and Data are an event's: Data is the archived envelope.
	Index uint64
	Seq   uint32
	Data  []byte
	// Key and Value are a state row's.
	Key, Value []byte
}

// Reader decodes a history file and checks it as it goes.
type Reader struct {
	br     *bufio.Reader
	sum    hash.Hash
	off    int64 // bytes consumed
	h      Header
	chk    checker
	buf    bytes.Buffer
	fixed  [16]byte
	done   bool
	err    error
	digest [sha256.Size]byte
}

// NewReader reads the magic, the version and the header from r.
func NewReader(r io.Reader) (*Reader, error) {
	rd := &Reader{br: bufio.NewReaderSize(r, 64<<10), sum: sha256.New()}
	magic := rd.fixed[:len(Magic)]
	if err := rd.read(magic); err != nil {
		if errors.Is(err, ErrTruncated) {
			return nil, fmt.Errorf("%w (the stream is shorter than the magic)", ErrMagic)
		}
		return nil, err
	}
	if string(magic) != Magic {
		return nil, fmt.Errorf("%w: it starts with %q, not %q", ErrMagic, magic, Magic)
	}
	ver := rd.fixed[:6]
	if err := rd.read(ver); err != nil {
		return nil, err
	}
	rd.h.FormatVersion = binary.BigEndian.Uint16(ver)
	if rd.h.FormatVersion == 0 || rd.h.FormatVersion > Version {
		return nil, fmt.Errorf("%w: format version %d; this ordo reads versions 1 to %d", ErrVersion, rd.h.FormatVersion, Version)
	}
	n := binary.BigEndian.Uint32(ver[2:])
	if n > MaxHeader {
		return nil, rd.corrupt("header of %d bytes, more than %d", n, MaxHeader)
	}
	hdr, err := rd.readN(int(n))
	if err != nil {
		return nil, err
	}
	version := rd.h.FormatVersion
	if err := json.Unmarshal(hdr, &rd.h); err != nil {
		return nil, rd.corrupt("header: %v", err)
	}
	rd.h.FormatVersion = version
	if err := checkHeader(rd.h); err != nil {
		return nil, fmt.Errorf("%w (offset %d)", err, rd.off)
	}
	rd.chk.h = rd.h
	return rd, nil
}

// checkHeader checks that a header is self-consistent.
func checkHeader(h Header) error {
	switch {
	case h.FirstIndex > h.LastIndex:
		return fmt.Errorf("%w: header: first index %d after last index %d", ErrCorrupt, h.FirstIndex, h.LastIndex)
	case h.Events > 0 && (h.FirstIndex == 0 || h.FirstIndex < h.From || h.To > 0 && h.LastIndex > h.To):
		return fmt.Errorf("%w: header: events [%d, %d] outside the range asked for [%d, %d]", ErrCorrupt, h.FirstIndex, h.LastIndex, h.From, h.To)
	case h.StateIndex > 0 && h.StateIndex+1 != h.From:
		return fmt.Errorf("%w: header: state at %d, but the events start from %d", ErrCorrupt, h.StateIndex, h.From)
	case h.StateIndex == 0 && h.StateRows > 0:
		return fmt.Errorf("%w: header: %d state rows without a state index", ErrCorrupt, h.StateRows)
	}
	return nil
}

// Header returns the file's header.
func (r *Reader) Header() Header { return r.h }

// Checksum returns the file's SHA-256 once Next returned io.EOF.
func (r *Reader) Checksum() string {
	if !r.done || r.err != io.EOF {
		return ""
	}
	return hex.EncodeToString(r.digest[:])
}

// Next returns the next record, or io.EOF once the trailer was read and
// the file checked out whole.
func (r *Reader) Next() (Record, error) {
	if r.err != nil {
		return Record{}, r.err
	}
	rec, err := r.next()
	if err != nil {
		r.err = err
	}
	return rec, err
}

func (r *Reader) next() (Record, error) {
	tag, err := r.br.ReadByte()
	if err == io.EOF {
		return Record{}, fmt.Errorf("%w: it ends at offset %d with no trailer (%d events of %d read)", ErrTruncated, r.off, r.chk.events, r.h.Events)
	} else if err != nil {
		return Record{}, fmt.Errorf("read history file at offset %d: %w", r.off, err)
	}
	at := r.off
	switch tag {
	case tagTrailer:
		return Record{}, r.trailer()
	case tagState:
		r.off++
		r.sum.Write([]byte{tag})
		lens := r.fixed[:8]
		if err := r.read(lens); err != nil {
			return Record{}, err
		}
		kl, vl := binary.BigEndian.Uint32(lens), binary.BigEndian.Uint32(lens[4:])
		if err := r.chk.state(int(kl), int(vl)); err != nil {
			return Record{}, fmt.Errorf("%w (record %d at offset %d)", err, r.chk.recordNumber, at)
		}
		b, err := r.readN(int(kl) + int(vl))
		if err != nil {
			return Record{}, err
		}
		return Record{Kind: KindState, Key: b[:kl], Value: b[kl:]}, nil
	case tagEvent:
		r.off++
		r.sum.Write([]byte{tag})
		hdr := r.fixed[:16]
		if err := r.read(hdr); err != nil {
			return Record{}, err
		}
		index, seq, n := binary.BigEndian.Uint64(hdr), binary.BigEndian.Uint32(hdr[8:]), binary.BigEndian.Uint32(hdr[12:])
		if err := r.chk.event(index, seq, int(n)); err != nil {
			return Record{}, fmt.Errorf("%w (record %d at offset %d)", err, r.chk.recordNumber, at)
		}
		b, err := r.readN(int(n))
		if err != nil {
			return Record{}, err
		}
		return Record{Kind: KindEvent, Index: index, Seq: seq, Data: b}, nil
	}
	return Record{}, r.corrupt("unknown record tag 0x%02x", tag)
}

// trailer checks the checksum, the counts and that nothing follows.
func (r *Reader) trailer() error {
	at := r.off
	r.off++
	r.sum.Sum(r.digest[:0])
	var got [sha256.Size]byte
	if _, err := io.ReadFull(r.br, got[:]); err != nil {
		return fmt.Errorf("%w: the trailer at offset %d is cut short", ErrTruncated, at)
	}
	r.off += sha256.Size
	if got != r.digest {
		return fmt.Errorf("%w: the trailer says %x, the content hashes to %x: the file was damaged after it was written",
			ErrChecksum, got, r.digest)
	}
	if err := r.chk.end(); err != nil {
		return fmt.Errorf("%w (at the trailer, offset %d)", err, at)
	}
	if _, err := r.br.ReadByte(); err != io.EOF {
		return r.corrupt("data after the trailer")
	}
	r.done = true
	return io.EOF
}

// read fills b from the stream, hashing it.
func (r *Reader) read(b []byte) error {
	n, err := io.ReadFull(r.br, b)
	r.sum.Write(b[:n])
	r.off += int64(n)
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%w: it ends at offset %d in the middle of a record (%d events of %d read)", ErrTruncated, r.off, r.chk.events, r.h.Events)
	}
	if err != nil {
		return fmt.Errorf("read history file at offset %d: %w", r.off, err)
	}
	return nil
}

// readN reads n bytes into the Reader's buffer, which grows only as data
// arrives, so a damaged length cannot make it allocate what is not there.
func (r *Reader) readN(n int) ([]byte, error) {
	r.buf.Reset()
	got, err := io.CopyN(&r.buf, r.br, int64(n))
	b := r.buf.Bytes()
	r.sum.Write(b)
	r.off += got
	if errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%w: it ends at offset %d in the middle of a record (%d events of %d read)", ErrTruncated, r.off, r.chk.events, r.h.Events)
	}
	if err != nil {
		return nil, fmt.Errorf("read history file at offset %d: %w", r.off, err)
	}
	return b, nil
}

func (r *Reader) corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: %s (offset %d)", ErrCorrupt, fmt.Sprintf(format, args...), r.off)
}

// Summary is what Verify learns about a whole file.
type Summary struct {
	Header    Header
	Checksum  string
	Bytes     int64
	StateRows uint64
	Events    uint64
}

// Verify reads a whole history file and checks it.
func Verify(r io.Reader) (Summary, error) {
	rd, err := NewReader(r)
	if err != nil {
		return Summary{}, err
	}
	s := Summary{Header: rd.Header()}
	for {
		rec, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return s, err
		}
		if rec.Kind == KindEvent {
			s.Events++
		} else {
			s.StateRows++
		}
	}
	s.Checksum, s.Bytes = rd.Checksum(), rd.off
	return s, nil
}
