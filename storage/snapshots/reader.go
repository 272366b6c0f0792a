package snapshots

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
	"os"
)

// Reader decodes a snapshot file and checks it as it goes.
type Reader struct {
	br     *bufio.Reader
	sum    hash.Hash
	off    int64 // bytes consumed
	h      Header
	rows   uint64
	last   []byte
	buf    bytes.Buffer
	fixed  [16]byte
	err    error
	digest [sha256.Size]byte
}

// NewReader reads the magic, the version and the header from r.
func NewReader(r io.Reader) (*Reader, error) {
	rd := &Reader{br: bufio.NewReaderSize(r, 1<<20), sum: sha256.New()}
	magic := rd.fixed[:len(Magic)]
	if err := rd.read(magic); err != nil {
		return nil, fmt.Errorf("%w (the stream is shorter than the magic)", ErrMagic)
	}
	if string(magic) != Magic {
		return nil, fmt.Errorf("%w: it starts with %q, not %q", ErrMagic, magic, Magic)
	}
	pre := rd.fixed[:6]
	if err := rd.read(pre); err != nil {
		return nil, err
	}
	version := binary.BigEndian.Uint16(pre)
	if version == 0 || version > Version {
		return nil, fmt.Errorf("%w: format version %d; this ordo reads versions 1 to %d", ErrVersion, version, Version)
	}
	n := binary.BigEndian.Uint32(pre[2:])
	if n > MaxHeader {
		return nil, rd.corrupt("a header of %d bytes, more than %d", n, MaxHeader)
	}
	hdr, err := rd.readN(int(n))
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(hdr, &rd.h); err != nil {
		return nil, rd.corrupt("header: %v", err)
	}
	rd.h.FormatVersion = version
	return rd, nil
}

// Header returns the file's header.
func (r *Reader) Header() Header { return r.h }

// Rows returns how many rows Next returned.
func (r *Reader) Rows() uint64 { return r.rows }

// Bytes returns how many bytes of the file were read.
func (r *Reader) Bytes() int64 { return r.off }

// Checksum returns the file's SHA-256, hex-encoded, once Next returned
// io.EOF; "" before.
func (r *Reader) Checksum() string {
	if r.err != io.EOF {
		return ""
	}
	return hex.EncodeToString(r.digest[:])
}

// Next returns the next row, valid until the next call, or io.EOF once
// the trailer was read and the file checked out whole.
func (r *Reader) Next() (key, value []byte, err error) {
	if r.err != nil {
		return nil, nil, r.err
	}
	key, value, err = r.next()
	if err != nil {
		r.err = err
	}
	return key, value, err
}

func (r *Reader) next() ([]byte, []byte, error) {
	at := r.off
	tag := r.fixed[:1]
	if err := r.read(tag); err != nil {
		return nil, nil, err
	}
	switch tag[0] {
	case tagTrailer:
		return nil, nil, r.trailer(at)
	case tagRow:
	default:
		return nil, nil, r.corrupt("unknown record tag 0x%02x at offset %d", tag[0], at)
	}
	lens := r.fixed[:8]
	if err := r.read(lens); err != nil {
		return nil, nil, err
	}
	kl, vl := int(binary.BigEndian.Uint32(lens)), int(binary.BigEndian.Uint32(lens[4:]))
	if kl == 0 || kl > MaxKey || vl > MaxValue {
		return nil, nil, fmt.Errorf("%w: row %d at offset %d: a key of %d bytes (1 to %d) and a value of %d (at most %d)",
			ErrCorrupt, r.rows+1, at, kl, MaxKey, vl, MaxValue)
	}
	b, err := r.readN(kl + vl)
	if err != nil {
		return nil, nil, err
	}
	if err := checkRow(r.last, r.rows, b[:kl], vl); err != nil {
		return nil, nil, fmt.Errorf("%w (offset %d)", err, at)
	}
	r.last = append(r.last[:0], b[:kl]...)
	r.rows++
	return b[:kl], b[kl:], nil
}

// trailer checks the row count, the checksum and that nothing follows.
func (r *Reader) trailer(at int64) error {
	count := r.fixed[:8]
	if err := r.read(count); err != nil {
		return fmt.Errorf("%w: the trailer at offset %d is cut short", ErrTruncated, at)
	}
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
	if n := binary.BigEndian.Uint64(count); n != r.rows {
		return fmt.Errorf("%w: the trailer counts %d rows, the file holds %d", ErrCorrupt, n, r.rows)
	}
	if _, err := r.br.ReadByte(); err != io.EOF {
		return r.corrupt("data after the trailer")
	}
	return io.EOF
}

// read fills b from the stream, hashing it.
func (r *Reader) read(b []byte) error {
	n, err := io.ReadFull(r.br, b)
	r.sum.Write(b[:n])
	r.off += int64(n)
	return r.readErr(err)
}

// readN reads n bytes into the Reader's buffer, which grows only as data
// arrives, so a damaged length cannot make it allocate what is not there.
func (r *Reader) readN(n int) ([]byte, error) {
	r.buf.Reset()
	got, err := io.CopyN(&r.buf, r.br, int64(n))
	b := r.buf.Bytes()
	r.sum.Write(b)
	r.off += got
	if err := r.readErr(err); err != nil {
		return nil, err
	}
	return b, nil
}

// readErr names a short read as truncation, at the offset reached.
func (r *Reader) readErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("%w: it ends at offset %d, after %d rows, with no trailer", ErrTruncated, r.off, r.rows)
	}
	return fmt.Errorf("read snapshot file at offset %d: %w", r.off, err)
}

func (r *Reader) corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: %s (offset %d)", ErrCorrupt, fmt.Sprintf(format, args...), r.off)
}

// IsInvalid reports whether err is about what a file holds (one of the
// sentinels above) rather than about reading it.
func IsInvalid(err error) bool {
	for _, e := range []error{ErrMagic, ErrVersion, ErrTruncated, ErrCorrupt, ErrChecksum} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// Summary is what Verify learns about a whole file.
type Summary struct {
	Header   Header
	Checksum string
	Bytes    int64
	Rows     uint64
}

// Verify reads a whole snapshot file and checks it; each, when set, is
// called with every row (valid during the call).
func Verify(r io.Reader, each func(key, value []byte) error) (Summary, error) {
	rd, err := NewReader(r)
	if err != nil {
		return Summary{}, err
	}
	for {
		k, v, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err == nil && each != nil {
			err = each(k, v)
		}
		if err != nil {
			return Summary{Header: rd.Header(), Rows: rd.Rows(), Bytes: rd.Bytes()}, err
		}
	}
	return Summary{Header: rd.Header(), Checksum: rd.Checksum(), Bytes: rd.Bytes(), Rows: rd.Rows()}, nil
}

// VerifyFile is Verify of the file at path.
func VerifyFile(path string, each func(key, value []byte) error) (Summary, error) {
	f, err := os.Open(path)
	if err != nil {
		return Summary{}, err
	}
	defer f.Close()
	return Verify(f, each)
}
