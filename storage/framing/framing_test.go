package framing_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/ordoplane/ordo/storage/framing"
)

var (
	errMagic     = errors.New("not a test file")
	errVersion   = errors.New("unsupported test file version")
	errTruncated = errors.New("test file is truncated")
	errCorrupt   = errors.New("test file is corrupt")
)

var testFormat = framing.Format{Name: "test file", Magic: "ORDOTST\n", Version: 2, MaxHeader: 64,
	ErrMagic: errMagic, ErrVersion: errVersion, ErrTruncated: errTruncated, ErrCorrupt: errCorrupt}

type header struct{ Name string }

// write returns a file of testFormat: the header, the record "abc" and a
// trailer of a tag outside the digest.
func write(t *testing.T) []byte {
	t.Helper()
	var b bytes.Buffer
	w, err := testFormat.NewWriter(&b, 16, header{Name: "h"})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write([]byte("abc")); err != nil {
		t.Fatal(err)
	}
	if err := w.Finish([]byte{'T'}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// read reads a file write made, returning the first error.
func read(file []byte) error {
	var h header
	r, version, err := testFormat.NewReader(bytes.NewReader(file), 16, &h, func() string { return "before the trailer" })
	if err != nil {
		return err
	}
	if version != testFormat.Version || h.Name != "h" {
		return errors.New("wrong preamble")
	}
	rec, err := r.ReadN(3)
	if err != nil {
		return err
	}
	if string(rec) != "abc" {
		return errors.New("wrong record")
	}
	at := r.Offset()
	tag, err := r.Byte()
	if err == io.EOF { // the end of the stream where a record may start
		return fmt.Errorf("%w: no trailer", errTruncated)
	} else if err != nil {
		return err
	}
	if tag != 'T' {
		return errors.New("wrong tag")
	}
	want := r.Digest()
	got, err := r.ReadDigest(at)
	if err != nil {
		return err
	}
	if got != want {
		return errors.New("digest mismatch")
	}
	return r.CheckEnd()
}

// TestRoundTrip: what a Writer writes, a Reader reads back: the header,
// the version, the records, a digest of every byte before the trailer's
// tag, and the end.
func TestRoundTrip(t *testing.T) {
	if err := read(write(t)); err != nil {
		t.Fatal(err)
	}
}

// TestReaderRefuses: every cut of the file is the format's truncation
// (or, within the magic, not a file of the format), saying where; a
// changed byte of the record breaks the digest; the wrong magic, a newer
// version, a header past the bound and trailing data are refused with the
// format's errors.
func TestReaderRefuses(t *testing.T) {
	file := write(t)
	for n := range len(file) {
		err := read(file[:n])
		want := errTruncated
		if n < len(testFormat.Magic) {
			want = errMagic
		}
		if !errors.Is(err, want) {
			t.Fatalf("cut at %d of %d: %v, want %v", n, len(file), err, want)
		}
		if want == errTruncated && n < len(file)-32-1 && !strings.Contains(err.Error(), "before the trailer") {
			t.Errorf("cut at %d: %v does not say how far it got", n, err)
		}
	}
	flip := func(i int) []byte {
		b := bytes.Clone(file)
		b[i] ^= 1
		return b
	}
	body := len(file) - 32 - 1 - 3
	if err := read(flip(body)); err == nil || err.Error() != "wrong record" {
		t.Errorf("a changed record: %v", err)
	}
	for name, tc := range map[string]struct {
		file []byte
		want error
	}{
		"magic":         {flip(0), errMagic},
		"newer version": {flip(len(testFormat.Magic) + 1), errVersion}, // 2 → 3
		"huge header":   {flip(len(testFormat.Magic) + 4), errCorrupt},
		"header":        {flip(len(testFormat.Magic) + 6), errCorrupt},
		"trailing data": {append(bytes.Clone(file), 0), errCorrupt},
	} {
		if err := read(tc.file); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", name, err, tc.want)
		}
	}
}

// TestWriterRefusesLargeHeader: a header past the format's bound is not
// written.
func TestWriterRefusesLargeHeader(t *testing.T) {
	var b bytes.Buffer
	if _, err := testFormat.NewWriter(&b, 16, header{Name: strings.Repeat("x", 64)}); err == nil || b.Len() > 0 {
		t.Fatalf("a %d-byte header: %v, %d bytes written", 64+11, err, b.Len())
	}
}
