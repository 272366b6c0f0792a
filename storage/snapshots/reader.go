package snapshots

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/ordoplane/ordo/storage/framing"
)

// Reader decodes a snapshot file and checks it as it goes.
type Reader struct {
	fr     *framing.Reader
	h      Header
	rows   uint64
	last   []byte
	fixed  [8]byte
	err    error
	digest [sha256.Size]byte
}

// NewReader reads the magic, the version and the header from r.
func NewReader(r io.Reader) (*Reader, error) {
	rd := &Reader{}
	fr, version, err := format.NewReader(r, 1<<20, &rd.h, func() string {
		return fmt.Sprintf("after %d rows, with no trailer", rd.rows)
	})
	if err != nil {
		return nil, err
	}
	rd.fr, rd.h.FormatVersion = fr, version
	return rd, nil
}

// Header returns the file's header.
func (r *Reader) Header() Header { return r.h }

// Rows returns how many rows Next returned.
func (r *Reader) Rows() uint64 { return r.rows }

// Bytes returns how many bytes of the file were read.
func (r *Reader) Bytes() int64 { return r.fr.Offset() }

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
	at := r.fr.Offset()
	tag := r.fixed[:1]
	if err := r.fr.Read(tag); err != nil {
		return nil, nil, err
	}
	switch tag[0] {
	case tagTrailer:
		return nil, nil, r.trailer(at)
	case tagRow:
	default:
		return nil, nil, r.fr.Corrupt("unknown record tag 0x%02x at offset %d", tag[0], at)
	}
	lens := r.fixed[:8]
	if err := r.fr.Read(lens); err != nil {
		return nil, nil, err
	}
	kl, vl := int(binary.BigEndian.Uint32(lens)), int(binary.BigEndian.Uint32(lens[4:]))
	if kl == 0 || kl > MaxKey || vl > MaxValue {
		return nil, nil, fmt.Errorf("%w: row %d at offset %d: a key of %d bytes (1 to %d) and a value of %d (at most %d)",
			ErrCorrupt, r.rows+1, at, kl, MaxKey, vl, MaxValue)
	}
	b, err := r.fr.ReadN(kl + vl)
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
	if err := r.fr.Read(count); err != nil {
		return fmt.Errorf("%w: the trailer at offset %d is cut short", ErrTruncated, at)
	}
	var err error
	if r.digest, err = r.fr.CheckDigest(at); err != nil {
		return err
	}
	if n := binary.BigEndian.Uint64(count); n != r.rows {
		return fmt.Errorf("%w: the trailer counts %d rows, the file holds %d", ErrCorrupt, n, r.rows)
	}
	if err := r.fr.CheckEnd(); err != nil {
		return err
	}
	return io.EOF
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
