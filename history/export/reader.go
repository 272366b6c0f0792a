package export

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"

	"github.com/ordoplane/ordo/storage/framing"
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
	fr     *framing.Reader
	h      Header
	chk    checker
	fixed  [16]byte
	done   bool
	err    error
	digest [sha256.Size]byte
}

// NewReader reads the magic, the version and the header from r.
func NewReader(r io.Reader) (*Reader, error) {
	rd := &Reader{}
	fr, version, err := format.NewReader(r, 64<<10, &rd.h, func() string {
		return fmt.Sprintf("in the middle of a record (%d events of %d read)", rd.chk.events, rd.h.Events)
	})
	if err != nil {
		return nil, err
	}
	rd.fr, rd.h.FormatVersion = fr, version
	if err := checkHeader(rd.h); err != nil {
		return nil, fmt.Errorf("%w (offset %d)", err, fr.Offset())
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
	at := r.fr.Offset()
	tag, err := r.fr.Byte()
	if err == io.EOF {
		return Record{}, fmt.Errorf("%w: it ends at offset %d with no trailer (%d events of %d read)", ErrTruncated, at, r.chk.events, r.h.Events)
	} else if err != nil {
		return Record{}, err
	}
	switch tag {
	case tagTrailer:
		return Record{}, r.trailer(at)
	case tagState:
		r.fr.Hash(tag)
		lens := r.fixed[:8]
		if err := r.fr.Read(lens); err != nil {
			return Record{}, err
		}
		kl, vl := binary.BigEndian.Uint32(lens), binary.BigEndian.Uint32(lens[4:])
		if err := r.chk.state(int(kl), int(vl)); err != nil {
			return Record{}, fmt.Errorf("%w (record %d at offset %d)", err, r.chk.recordNumber, at)
		}
		b, err := r.fr.ReadN(int(kl) + int(vl))
		if err != nil {
			return Record{}, err
		}
		return Record{Kind: KindState, Key: b[:kl], Value: b[kl:]}, nil
	case tagEvent:
		r.fr.Hash(tag)
		hdr := r.fixed[:16]
		if err := r.fr.Read(hdr); err != nil {
			return Record{}, err
		}
		index, seq, n := binary.BigEndian.Uint64(hdr), binary.BigEndian.Uint32(hdr[8:]), binary.BigEndian.Uint32(hdr[12:])
		if err := r.chk.event(index, seq, int(n)); err != nil {
			return Record{}, fmt.Errorf("%w (record %d at offset %d)", err, r.chk.recordNumber, at)
		}
		b, err := r.fr.ReadN(int(n))
		if err != nil {
			return Record{}, err
		}
		return Record{Kind: KindEvent, Index: index, Seq: seq, Data: b}, nil
	}
	return Record{}, r.fr.Corrupt("unknown record tag 0x%02x", tag)
}

// trailer checks the checksum, the counts and that nothing follows; the
// trailer's tag is at offset at.
func (r *Reader) trailer(at int64) error {
	var err error
	if r.digest, err = r.fr.CheckDigest(at); err != nil {
		return err
	}
	if err := r.chk.end(); err != nil {
		return fmt.Errorf("%w (at the trailer, offset %d)", err, at)
	}
	if err := r.fr.CheckEnd(); err != nil {
		return err
	}
	r.done = true
	return io.EOF
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
	s.Checksum, s.Bytes = rd.Checksum(), rd.fr.Offset()
	return s, nil
}
