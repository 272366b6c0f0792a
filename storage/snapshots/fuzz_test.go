package snapshots_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"io"
	"testing"

	"github.com/ordoplane/ordo/storage/snapshots"
)

// FuzzReader feeds arbitrary bytes to a Reader. It must not panic; a read
// that fails must fail with one of the package's errors; and a read that
// ends in io.EOF must account for every byte, and re-encoding what it
// returned with a Writer must give the input back (the format is
// canonical), except for the spelling of the header JSON, which any
// JSON decoding to the same Header may have.
//
// Every input is also tried with its last 32 bytes replaced by the right
// digest: random bytes never carry a valid SHA-256, and without that the
// fuzzer could not get past the checksum to the checks after it.
func FuzzReader(f *testing.F) {
	for _, seed := range fuzzSeeds(f) {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkCanonical(t, data)
		if len(data) >= sha256.Size {
			checkCanonical(t, reseal(data))
		}
	})
}

func fuzzSeeds(f *testing.F) [][]byte {
	small := smallFile(f)
	hdr := minimalJSON(f)
	out := [][]byte{
		small,
		encode(f, fullHeader(), nil),
		encode(f, snapshots.Header{}, []row{{"\x00", ""}, {"\xff", "\x00"}}),
		// Header JSON a Writer would not write but that reads fine.
		seal(prefix(snapshots.Version, []byte(` { "clusterid" : "c1", "Index":1, "Projections":{} } `)), 0),
		seal(append(prefix(snapshots.Version, []byte(`null`)), record("k", "v")...), 1),
		// Broken ones.
		nil,
		small[:len(small)/2],
		small[:len(small)-1],
		append(bytes.Clone(small), 0),
		seal(append(append(prefix(snapshots.Version, hdr), record("b", "")...), record("a", "")...), 2),
		seal(append(prefix(snapshots.Version, hdr), 'X'), 0),
		seal(append(prefix(snapshots.Version, hdr), record("k", "v")...), 2),
		append(prefix(snapshots.Version, hdr), recordLens(1, 200<<20, "k0123")...),
		seal(prefix(snapshots.Version, []byte(`{"Index":-1}`)), 0),
	}
	wrongVersion := bytes.Clone(small)
	binary.BigEndian.PutUint16(wrongVersion[8:], snapshots.Version+1)
	wrongMagic := bytes.Clone(small)
	wrongMagic[0] = 'X'
	return append(out, wrongVersion, wrongMagic)
}

// checkCanonical reads data and checks what the read tells, as
// FuzzReader describes.
func checkCanonical(t *testing.T, data []byte) {
	r, rows, err := readAll(bytes.NewReader(data))
	if err != io.EOF {
		if !wrapsSentinel(err) {
			t.Fatalf("the read failed with %v, which wraps none of the package's errors", err)
		}
		return
	}
	if r.Bytes() != int64(len(data)) {
		t.Fatalf("read %d bytes of %d", r.Bytes(), len(data))
	}
	if got, want := r.Checksum(), digestOf(data); got != want {
		t.Fatalf("Checksum %s, want %s", got, want)
	}
	if r.Rows() != uint64(len(rows)) {
		t.Fatalf("Rows %d, but Next returned %d", r.Rows(), len(rows))
	}
	h := r.Header()
	if h.FormatVersion != snapshots.Version {
		t.Fatalf("FormatVersion %d, want %d", h.FormatVersion, snapshots.Version)
	}

	canonical, err := json.Marshal(h)
	if err != nil {
		t.Fatalf("the header read does not marshal: %v", err)
	}
	if len(canonical) > snapshots.MaxHeader {
		return // a compact spelling of a header a Writer cannot write
	}
	out := encode(t, h, rows)

	hdrEnd := headerEnd(data)
	if bytes.Equal(data[14:hdrEnd], canonical) {
		if !bytes.Equal(out, data) {
			t.Fatalf("re-encoding gives %d bytes that differ from the input's %d:\n in %q\nout %q", len(out), len(data), data, out)
		}
		return
	}
	// The header JSON is spelt otherwise: what follows it must be the same
	// bytes, and the re-encoded file must read back to the same header and
	// rows.
	if !bytes.Equal(data[hdrEnd:len(data)-sha256.Size], out[14+len(canonical):len(out)-sha256.Size]) {
		t.Fatalf("re-encoding changes the records or the row count:\n in %q\nout %q", data, out)
	}
	r2, rows2, err := readAll(bytes.NewReader(out))
	if err != io.EOF {
		t.Fatalf("the re-encoded file does not read back: %v", err)
	}
	again, err := json.Marshal(r2.Header())
	if err != nil || !bytes.Equal(again, canonical) {
		t.Fatalf("the header read back is %s (%v), want %s", again, err, canonical)
	}
	checkRows(t, rows2, rows)
}
