package snapshots_test

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"math"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/ordoplane/ordo/storage/snapshots"
)

var sentinels = []error{
	snapshots.ErrMagic, snapshots.ErrVersion, snapshots.ErrTruncated, snapshots.ErrCorrupt, snapshots.ErrChecksum,
}

// wrapsSentinel reports whether err wraps one of the package's errors.
func wrapsSentinel(err error) bool {
	for _, s := range sentinels {
		if errors.Is(err, s) {
			return true
		}
	}
	return false
}

// smallRows are the rows of smallFile.
var smallRows = []row{{"a", "1"}, {"b", ""}, {"c", "333"}}

// smallFile is a valid file small enough to damage at every offset.
func smallFile(t testing.TB) []byte {
	t.Helper()
	return encode(t, snapshots.Header{ClusterID: "c1", Server: "s1", Index: 9}, smallRows)
}

// headerEnd is the offset of the first byte after a file's header.
func headerEnd(file []byte) int {
	return 14 + int(binary.BigEndian.Uint32(file[10:14]))
}

// minimalJSON is a header for hand-built files.
func minimalJSON(t testing.TB) []byte {
	t.Helper()
	b, err := json.Marshal(snapshots.Header{ClusterID: "c1", Index: 1})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// expectRead reads a whole file and fails unless the read ends in an
// error wrapping want.
func expectRead(t *testing.T, file []byte, want error) {
	t.Helper()
	_, rows, err := readAll(bytes.NewReader(file))
	if !errors.Is(err, want) {
		t.Errorf("read ended after %d rows with %v, want %v", len(rows), err, want)
	}
}

// TestReaderMagic: a stream that does not start with the magic, or is
// shorter than it, is ErrMagic.
func TestReaderMagic(t *testing.T) {
	file := smallFile(t)
	wrong := bytes.Clone(file)
	wrong[6] = 'Q'
	cases := map[string][]byte{
		"empty stream":          nil,
		"wrong magic":           wrong,
		"magic without newline": append([]byte("ORDOSNP"), file[8:]...),
		"another format":        []byte("PK\x03\x04\x14\x00\x00\x00\x08\x00"),
		"part of the magic":     []byte("ORDO"),
	}
	for name, data := range cases {
		t.Run(name, func(t *testing.T) {
			r, err := snapshots.NewReader(bytes.NewReader(data))
			if !errors.Is(err, snapshots.ErrMagic) || r != nil {
				t.Errorf("NewReader: %v, %v; want nil, ErrMagic", r, err)
			}
		})
	}
}

// TestReaderVersion: version 0 and versions after Version are ErrVersion.
func TestReaderVersion(t *testing.T) {
	for _, v := range []uint16{0, snapshots.Version + 1, math.MaxUint16} {
		file := smallFile(t)
		binary.BigEndian.PutUint16(file[8:10], v)
		_, err := snapshots.NewReader(bytes.NewReader(reseal(file)))
		if !errors.Is(err, snapshots.ErrVersion) {
			t.Errorf("version %d: %v, want ErrVersion", v, err)
		}
	}
}

// TestReaderHeaderLength: a header length over MaxHeader is ErrCorrupt
// before any of it is read; exactly MaxHeader is fine.
func TestReaderHeaderLength(t *testing.T) {
	for _, n := range []uint32{snapshots.MaxHeader + 1, math.MaxUint32} {
		b := []byte(snapshots.Magic)
		b = binary.BigEndian.AppendUint16(b, snapshots.Version)
		b = binary.BigEndian.AppendUint32(b, n)
		b = append(b, `{"ClusterID":"c1"}`...)
		_, err := snapshots.NewReader(bytes.NewReader(b))
		if !errors.Is(err, snapshots.ErrCorrupt) {
			t.Errorf("header length %d: %v, want ErrCorrupt", n, err)
		}
	}

	// JSON allows trailing white space: pad a header to MaxHeader bytes.
	hdr := minimalJSON(t)
	hdr = append(hdr, bytes.Repeat([]byte{' '}, snapshots.MaxHeader-len(hdr))...)
	file := seal(append(prefix(snapshots.Version, hdr), record("k", "v")...), 1)
	r, rows, err := readAll(bytes.NewReader(file))
	if err != io.EOF {
		t.Fatalf("a header of exactly MaxHeader bytes: %v", err)
	}
	checkRows(t, rows, []row{{"k", "v"}})
	if r.Header().ClusterID != "c1" || r.Bytes() != int64(len(file)) {
		t.Errorf("header %+v, %d bytes read of %d", r.Header(), r.Bytes(), len(file))
	}
}

// TestReaderBadHeaderJSON: a header that is not a JSON Header is
// ErrCorrupt, even in a file whose checksum is right.
func TestReaderBadHeaderJSON(t *testing.T) {
	for _, hdr := range []string{
		"",
		"{",
		`{"ClusterID":"c1"`,
		`{"ClusterID":1}`,
		`{"Index":-1}`,
		`{"Index":1.5}`,
		`{"Projections":[1]}`,
		`{"Created":"yesterday"}`,
		`[]`,
		`{} {}`,
		"{\"ClusterID\":\"c1\"}\x00",
	} {
		file := seal(prefix(snapshots.Version, []byte(hdr)), 0)
		_, err := snapshots.NewReader(bytes.NewReader(file))
		if !errors.Is(err, snapshots.ErrCorrupt) {
			t.Errorf("header %q: %v, want ErrCorrupt", hdr, err)
		}
	}
}

// TestReaderTruncated: a file cut at any offset is an error, never io.EOF:
// ErrMagic while the magic is incomplete, ErrTruncated from there on, the
// trailer's digest included.
func TestReaderTruncated(t *testing.T) {
	file := smallFile(t)
	for n := range len(file) {
		want := snapshots.ErrTruncated
		if n < len(snapshots.Magic) {
			want = snapshots.ErrMagic
		}
		_, rows, err := readAll(bytes.NewReader(file[:n]))
		if !errors.Is(err, want) {
			t.Errorf("cut at %d of %d bytes: %v after %d rows, want %v", n, len(file), err, len(rows), want)
		}
	}
}

// TestReaderFlippedByte: a file with any byte changed is an error, never
// io.EOF: ErrMagic in the magic, ErrVersion in the version and one of
// ErrCorrupt, ErrTruncated or ErrChecksum anywhere else.
func TestReaderFlippedByte(t *testing.T) {
	file := smallFile(t)
	hdrEnd := headerEnd(file)
	for off := range len(file) {
		for _, mask := range []byte{0x01, 0x80, 0xff} {
			bad := bytes.Clone(file)
			bad[off] ^= mask
			_, rows, err := readAll(bytes.NewReader(bad))
			var ok bool
			switch {
			case off < 8:
				ok = errors.Is(err, snapshots.ErrMagic)
			case off < 10:
				ok = errors.Is(err, snapshots.ErrVersion)
			default:
				ok = errors.Is(err, snapshots.ErrCorrupt) || errors.Is(err, snapshots.ErrTruncated) ||
					errors.Is(err, snapshots.ErrChecksum)
			}
			if !ok {
				where := "in the header"
				if off >= hdrEnd {
					where = "after the header"
				}
				t.Errorf("byte %d (%s) ^ %#02x: read ended after %d rows with %v", off, where, mask, len(rows), err)
			}
		}
	}
}

// TestReaderChecksum: a damaged digest, or content changed under a
// digest left as it was, is ErrChecksum.
func TestReaderChecksum(t *testing.T) {
	file := smallFile(t)

	bad := bytes.Clone(file)
	bad[len(bad)-1] ^= 1
	expectRead(t, bad, snapshots.ErrChecksum)

	bad = bytes.Clone(file)
	bad[len(bad)-41+8] ^= 1 // the row count's low byte
	expectRead(t, bad, snapshots.ErrChecksum)

	bad = bytes.Clone(file)
	bad[bytes.Index(bad, []byte("333"))] = '4' // a value
	expectRead(t, bad, snapshots.ErrChecksum)
}

// TestReaderRowCount: a trailer whose count disagrees with the records,
// under a digest that matches, is ErrCorrupt.
func TestReaderRowCount(t *testing.T) {
	for _, n := range []uint64{0, 2, 4, math.MaxUint64} {
		file := smallFile(t)
		binary.BigEndian.PutUint64(file[len(file)-40:], n)
		file = reseal(file)
		_, rows, err := readAll(bytes.NewReader(file))
		if !errors.Is(err, snapshots.ErrCorrupt) || errors.Is(err, snapshots.ErrChecksum) {
			t.Errorf("trailer counting %d rows: %v, want ErrCorrupt", n, err)
		}
		checkRows(t, rows, smallRows)
	}
}

// TestReaderDataAfterTrailer: anything after the trailer is ErrCorrupt.
func TestReaderDataAfterTrailer(t *testing.T) {
	file := smallFile(t)
	for name, tail := range map[string][]byte{
		"one zero byte": {0},
		"a record":      record("d", "4"),
		"a second file": file,
	} {
		t.Run(name, func(t *testing.T) {
			expectRead(t, append(bytes.Clone(file), tail...), snapshots.ErrCorrupt)
		})
	}
}

// TestReaderBadRecords: records a Writer would refuse, in files whose
// count and digest are right, are ErrCorrupt once reached; the rows
// before them are returned.
func TestReaderBadRecords(t *testing.T) {
	long := strings.Repeat("k", snapshots.MaxKey+1)
	cases := []struct {
		name    string
		records [][]byte
		rows    uint64
		good    []row // what Next returns before the error
	}{
		{"keys descending", [][]byte{record("b", "1"), record("a", "2")}, 2, []row{{"b", "1"}}},
		{"key repeated", [][]byte{record("a", "1"), record("b", "2"), record("b", "3")}, 3, []row{{"a", "1"}, {"b", "2"}}},
		{"longer key first", [][]byte{record("ab", ""), record("a", "")}, 2, []row{{"ab", ""}}},
		{"empty key", [][]byte{record("", "v")}, 1, nil},
		{"empty key after a row", [][]byte{record("a", "1"), record("", "v")}, 2, []row{{"a", "1"}}},
		{"key over MaxKey", [][]byte{record(long, "v")}, 1, nil},
		{"value over MaxValue", [][]byte{recordLens(1, snapshots.MaxValue+1, "kv")}, 1, nil},
		{"lengths at the limit", [][]byte{recordLens(math.MaxUint32, math.MaxUint32, "kv")}, 1, nil},
		{"unknown tag", [][]byte{{'X'}}, 0, nil},
		{"unknown tag after a row", [][]byte{record("a", "1"), {'r', 0, 0, 0, 1, 0, 0, 0, 0, 'b'}}, 2, []row{{"a", "1"}}},
		{"zero tag", [][]byte{{0}}, 0, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			body := prefix(snapshots.Version, minimalJSON(t))
			for _, r := range tc.records {
				body = append(body, r...)
			}
			_, rows, err := readAll(bytes.NewReader(seal(body, tc.rows)))
			if !errors.Is(err, snapshots.ErrCorrupt) {
				t.Errorf("read ended after %d rows with %v, want ErrCorrupt", len(rows), err)
			}
			checkRows(t, rows, tc.good)
		})
	}
}

// TestReaderHugeLengthTruncated: a record claiming a 200 MiB value with a
// few bytes after it is ErrTruncated, and the Reader does not allocate
// what the length claims, only what arrives.
func TestReaderHugeLengthTruncated(t *testing.T) {
	file := prefix(snapshots.Version, minimalJSON(t))
	file = append(file, recordLens(1, 200<<20, "k0123456789")...)

	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	r, err := snapshots.NewReader(bytes.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = r.Next()
	runtime.ReadMemStats(&after)
	if !errors.Is(err, snapshots.ErrTruncated) {
		t.Fatalf("Next: %v, want ErrTruncated", err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 32<<20 {
		t.Errorf("reading %d bytes allocated %d MiB", len(file), got>>20)
	}
}

// TestReaderErrorIsSticky: once Next failed it keeps returning the error.
func TestReaderErrorIsSticky(t *testing.T) {
	file := smallFile(t)
	r, err := snapshots.NewReader(bytes.NewReader(file[:len(file)-50]))
	if err != nil {
		t.Fatal(err)
	}
	var first error
	for first == nil {
		_, _, first = r.Next()
	}
	if _, _, err := r.Next(); err != first {
		t.Errorf("Next after %v: %v", first, err)
	}
	if r.Checksum() != "" {
		t.Errorf("Checksum of a truncated file: %q", r.Checksum())
	}
}

// TestReaderReadError: an error of the underlying reader in the records
// is returned wrapped, not taken for the end of the file.
func TestReaderReadError(t *testing.T) {
	file := smallFile(t)
	disk := errors.New("read error")
	src := io.MultiReader(bytes.NewReader(file[:headerEnd(file)+12]), iotest.ErrReader(disk))
	_, rows, err := readAll(src)
	if !errors.Is(err, disk) {
		t.Errorf("read ended after %d rows with %v, want %v", len(rows), err, disk)
	}
}
