// Package framing is the byte layer ordo's files share (history files,
// snapshot files): a preamble of magic, format version and a
// length-prefixed JSON header; records each format lays out itself; and
// a trailer ending in the SHA-256 of what precedes it. Writer and Reader
// hash every byte they pass and count what they read; a Reader's buffer
// grows only as bytes arrive, so a damaged length cannot make it allocate
// what is not there.
package framing

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
)

// Format is a kind of framed file: the errors its readers return name
// the kind (each format declares its own, for errors.Is).
type Format struct {
	// Name names the kind in messages ("history file").
	Name  string
	Magic string
	// Version is the newest format version this ordo writes and reads.
	Version uint16
	// MaxHeader bounds the header's JSON.
	MaxHeader int
	// ErrMagic, ErrVersion, ErrTruncated and ErrCorrupt are what a reader
	// wraps for a stream that is not of the kind, of a newer version, cut
	// short, or malformed.
	ErrMagic, ErrVersion, ErrTruncated, ErrCorrupt error
	// ErrChecksum is what CheckDigest wraps for a trailer whose digest does
	// not match the content.
	ErrChecksum error
}

// preamble is the magic's length plus the version and the header length.
func (f *Format) preamble() int { return len(f.Magic) + 6 }

// Writer writes a framed file through a buffer, hashing every byte.
type Writer struct {
	bw  *bufio.Writer
	sum hash.Hash
	err error
}

// NewWriter writes f's magic and version and h, as JSON, to w through a
// buffer of size bytes.
func (f *Format) NewWriter(w io.Writer, size int, h any) (*Writer, error) {
	hdr, err := json.Marshal(h)
	if err != nil {
		return nil, fmt.Errorf("%s header: %w", f.Name, err)
	}
	if len(hdr) > f.MaxHeader {
		return nil, fmt.Errorf("%s header: %d bytes, more than %d", f.Name, len(hdr), f.MaxHeader)
	}
	wr := &Writer{bw: bufio.NewWriterSize(w, size), sum: sha256.New()}
	pre := make([]byte, 0, f.preamble())
	pre = append(pre, f.Magic...)
	pre = binary.BigEndian.AppendUint16(pre, f.Version)
	pre = binary.BigEndian.AppendUint32(pre, uint32(len(hdr)))
	wr.Write(pre)
	return wr, wr.Write(hdr)
}

// Write writes b and hashes it; the first error sticks and is returned
// from then on.
func (w *Writer) Write(b []byte) error {
	if w.err == nil {
		w.sum.Write(b)
		_, w.err = w.bw.Write(b)
	}
	return w.err
}

// Err returns the first error a write met.
func (w *Writer) Err() error { return w.err }

// Finish writes unhashed (what a trailer holds before its digest but
// outside it), the SHA-256 of every byte written so far, and flushes. It
// does not close the underlying writer.
func (w *Writer) Finish(unhashed []byte) error {
	if w.err != nil {
		return w.err
	}
	tr := w.sum.Sum(append([]byte(nil), unhashed...))
	if _, w.err = w.bw.Write(tr); w.err == nil {
		w.err = w.bw.Flush()
	}
	return w.err
}

// Reader reads a framed file, hashing what it reads and counting it.
type Reader struct {
	f   *Format
	br  *bufio.Reader
	sum hash.Hash
	off int64
	buf bytes.Buffer
	pre [16]byte
	// short says where a stream cut short ended ("after 12 rows, with no
	// trailer"), for ErrTruncated.
	short func() string
}

// NewReader reads f's preamble from r through a buffer of size bytes,
// decodes the header into h and returns the file's format version. short
// describes, for the errors of a stream cut short, how far it got.
func (f *Format) NewReader(r io.Reader, size int, h any, short func() string) (*Reader, uint16, error) {
	rd := &Reader{f: f, br: bufio.NewReaderSize(r, size), sum: sha256.New(), short: short}
	magic := rd.pre[:len(f.Magic)]
	if err := rd.Read(magic); err != nil {
		if errors.Is(err, f.ErrTruncated) {
			return nil, 0, fmt.Errorf("%w (the stream is shorter than the magic)", f.ErrMagic)
		}
		return nil, 0, err
	}
	if string(magic) != f.Magic {
		return nil, 0, fmt.Errorf("%w: it starts with %q, not %q", f.ErrMagic, magic, f.Magic)
	}
	pre := rd.pre[:6]
	if err := rd.Read(pre); err != nil {
		return nil, 0, err
	}
	version := binary.BigEndian.Uint16(pre)
	if version == 0 || version > f.Version {
		return nil, 0, fmt.Errorf("%w: format version %d; this ordo reads versions 1 to %d", f.ErrVersion, version, f.Version)
	}
	n := binary.BigEndian.Uint32(pre[2:])
	if n > uint32(f.MaxHeader) {
		return nil, 0, rd.Corrupt("a header of %d bytes, more than %d", n, f.MaxHeader)
	}
	hdr, err := rd.ReadN(int(n))
	if err != nil {
		return nil, 0, err
	}
	if err := json.Unmarshal(hdr, h); err != nil {
		return nil, 0, rd.Corrupt("header: %v", err)
	}
	return rd, version, nil
}

// Offset returns how many bytes were read.
func (r *Reader) Offset() int64 { return r.off }

// Read fills b from the stream and hashes it.
func (r *Reader) Read(b []byte) error {
	n, err := io.ReadFull(r.br, b)
	r.sum.Write(b[:n])
	r.off += int64(n)
	return r.readErr(err)
}

// ReadN reads n bytes into the Reader's buffer (valid until the next
// call) and hashes them.
func (r *Reader) ReadN(n int) ([]byte, error) {
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

// Byte reads one byte without hashing it (a tag the caller hashes, or
// not, itself: Hash); at the end of the stream it returns io.EOF.
func (r *Reader) Byte() (byte, error) {
	b, err := r.br.ReadByte()
	if err == nil {
		r.off++
	} else if err != io.EOF {
		err = r.readErr(err)
	}
	return b, err
}

// Hash hashes b as if it had been read.
func (r *Reader) Hash(b ...byte) { r.sum.Write(b) }

// Digest returns the SHA-256 of every byte hashed so far.
func (r *Reader) Digest() (d [sha256.Size]byte) {
	r.sum.Sum(d[:0])
	return d
}

// ReadDigest reads the digest of the trailer that starts at offset at,
// not hashing it; a stream that ends first is ErrTruncated.
func (r *Reader) ReadDigest(at int64) (d [sha256.Size]byte, err error) {
	n, err := io.ReadFull(r.br, d[:])
	r.off += int64(n)
	if err != nil {
		return d, fmt.Errorf("%w: the trailer at offset %d is cut short", r.f.ErrTruncated, at)
	}
	return d, nil
}

// CheckDigest reads the digest of the trailer that starts at offset at
// (ReadDigest) and checks it against the digest of every byte hashed
// before it, which it returns.
func (r *Reader) CheckDigest(at int64) ([sha256.Size]byte, error) {
	d := r.Digest()
	got, err := r.ReadDigest(at)
	if err != nil {
		return d, err
	}
	if got != d {
		return d, fmt.Errorf("%w: the trailer says %x, the content hashes to %x: the file was damaged after it was written",
			r.f.ErrChecksum, got, d)
	}
	return d, nil
}

// CheckEnd fails unless the stream ends here.
func (r *Reader) CheckEnd() error {
	if _, err := r.br.ReadByte(); err != io.EOF {
		return r.Corrupt("data after the trailer")
	}
	return nil
}

// Corrupt returns the format's ErrCorrupt, saying what and where.
func (r *Reader) Corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: %s (offset %d)", r.f.ErrCorrupt, fmt.Sprintf(format, args...), r.off)
}

// readErr names a short read as truncation, at the offset reached.
func (r *Reader) readErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("%w: it ends at offset %d %s", r.f.ErrTruncated, r.off, r.short())
	}
	return fmt.Errorf("read %s at offset %d: %w", r.f.Name, r.off, err)
}
