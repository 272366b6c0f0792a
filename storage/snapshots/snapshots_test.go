package snapshots_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/ordoplane/ordo/storage/snapshots"
)

// row is one record of a file, as strings so rows compare with ==.
type row struct{ Key, Value string }

// encode writes h and rows with a Writer and returns the file.
func encode(t testing.TB, h snapshots.Header, rows []row) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := snapshots.NewWriter(&buf, h)
	if err != nil {
		t.Fatalf("NewWriter: %v", err)
	}
	for i, r := range rows {
		if err := w.Row([]byte(r.Key), []byte(r.Value)); err != nil {
			t.Fatalf("Row %d (%.20q): %v", i, r.Key, err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	return buf.Bytes()
}

// readAll reads a whole file: the Reader (nil when NewReader failed), the
// rows Next returned and the error that ended the read, io.EOF when the
// file checked out.
func readAll(src io.Reader) (*snapshots.Reader, []row, error) {
	r, err := snapshots.NewReader(src)
	if err != nil {
		return nil, nil, err
	}
	var rows []row
	for {
		k, v, err := r.Next()
		if err != nil {
			return r, rows, err
		}
		rows = append(rows, row{string(k), string(v)})
	}
}

// prefix builds the start of a file by hand: the magic, version, the
// header's length and the header.
func prefix(version uint16, header []byte) []byte {
	b := []byte(snapshots.Magic)
	b = binary.BigEndian.AppendUint16(b, version)
	b = binary.BigEndian.AppendUint32(b, uint32(len(header)))
	return append(b, header...)
}

// record builds an 'R' record by hand.
func record(key, value string) []byte {
	return recordLens(uint32(len(key)), uint32(len(value)), key+value)
}

// recordLens builds an 'R' record with the given lengths, whatever data
// follows them.
func recordLens(klen, vlen uint32, data string) []byte {
	b := []byte{'R'}
	b = binary.BigEndian.AppendUint32(b, klen)
	b = binary.BigEndian.AppendUint32(b, vlen)
	return append(b, data...)
}

// seal appends the trailer to body: 'T', the row count and the SHA-256 of
// everything before the digest.
func seal(body []byte, rows uint64) []byte {
	b := slices.Clone(body)
	b = append(b, 'T')
	b = binary.BigEndian.AppendUint64(b, rows)
	sum := sha256.Sum256(b)
	return append(b, sum[:]...)
}

// reseal returns a copy of file whose last 32 bytes are replaced by the
// SHA-256 of the bytes before them, so that a hand-made change elsewhere
// passes the checksum. file must be at least 32 bytes long.
func reseal(file []byte) []byte {
	b := slices.Clone(file)
	sum := sha256.Sum256(b[:len(b)-sha256.Size])
	copy(b[len(b)-sha256.Size:], sum[:])
	return b
}

// digestOf is the checksum a Reader should report for a whole file.
func digestOf(file []byte) string {
	sum := sha256.Sum256(file[:len(file)-sha256.Size])
	return hex.EncodeToString(sum[:])
}

// build hand-writes the file a Writer should write for h and rows.
func build(t testing.TB, h snapshots.Header, rows []row) []byte {
	t.Helper()
	hdr, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	body := prefix(snapshots.Version, hdr)
	for _, r := range rows {
		body = append(body, record(r.Key, r.Value)...)
	}
	return seal(body, uint64(len(rows)))
}

// checkHeader compares headers, the Created times by instant and offset
// (a time that went through JSON has a location of its own).
func checkHeader(t *testing.T, got, want snapshots.Header) {
	t.Helper()
	if !got.Created.Equal(want.Created) {
		t.Errorf("header Created %v, want %v", got.Created, want.Created)
	}
	_, gotOff := got.Created.Zone()
	_, wantOff := want.Created.Zone()
	if gotOff != wantOff {
		t.Errorf("header Created at offset %ds, want %ds", gotOff, wantOff)
	}
	got.Created, want.Created = time.Time{}, time.Time{}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("header\n got %+v\nwant %+v", got, want)
	}
}

func checkRows(t *testing.T, got, want []row) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%d rows, want %d", len(got), len(want))
	}
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			t.Errorf("row %d: %.40q=%.40q, want %.40q=%.40q", i, got[i].Key, got[i].Value, want[i].Key, want[i].Value)
			return
		}
	}
}

// fullHeader sets every field of a Header.
func fullHeader() snapshots.Header {
	return snapshots.Header{
		FormatVersion: 7, // not stored: a Writer always writes Version
		ClusterID:     "cluster-7f3a",
		Server:        "server-2",
		Index:         48213,
		LastTime:      1_760_000_000_123_456_789,
		Projections:   map[string]int{"allocs": 3, "jobs": 1, "nodes": 12},
		Created:       time.Date(2026, 3, 14, 15, 9, 26, 535897932, time.FixedZone("", 5*3600+30*60)),
		OrdoVersion:   "1.4.0-dev",
	}
}

// manyRows is a few thousand rows in byte order: binary keys, shorter
// prefixes before longer keys, values of varied length and one value
// larger than the Reader's and the Writer's buffers.
func manyRows() []row {
	rows := []row{{"\x00", "nul"}, {"\x00\x00", ""}, {"\x00\x01", "\xff\x00"}}
	for i := range 3000 {
		rows = append(rows, row{fmt.Sprintf("jobs/%05d", i), strings.Repeat(string(rune('a'+i%26)), i%300)})
	}
	rows = append(rows, row{"jobs/03000/alloc", "x"})
	rows = append(rows, row{"zz/big", strings.Repeat("0123456789abcdef", (1<<20+4096)/16)})
	return append(rows, row{"\xff", "last but one"}, row{"\xff\xff", "last"})
}

// TestRoundTrip: what a Writer writes is exactly the documented layout,
// and a Reader, however the bytes arrive, gives back the header and every
// row, then io.EOF (again on the next call) with the row count, the byte
// count and the SHA-256 of the file before its digest; Verify reports the
// same and sees every row.
func TestRoundTrip(t *testing.T) {
	cases := []struct {
		name   string
		header snapshots.Header
		rows   []row
	}{
		{"no rows", fullHeader(), nil},
		{"no rows, minimal header", snapshots.Header{ClusterID: "c"}, nil},
		{"one row", fullHeader(), []row{{"jobs/web", `{"Name":"web"}`}}},
		{"empty value", fullHeader(), []row{{"a", "1"}, {"b", ""}, {"c", "3"}}},
		{"key of MaxKey bytes", fullHeader(), []row{
			{strings.Repeat("k", snapshots.MaxKey), "v"},
			{"l", ""},
			{"m" + strings.Repeat("\xff", snapshots.MaxKey-1), strings.Repeat("w", 100)},
		}},
		{"many rows", fullHeader(), manyRows()},
	}
	readers := []struct {
		name string
		wrap func(io.Reader) io.Reader
	}{
		{"whole", func(r io.Reader) io.Reader { return r }},
		{"one byte at a time", iotest.OneByteReader},
		{"half reads", iotest.HalfReader},
		{"EOF with the last data", iotest.DataErrReader},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			file := encode(t, tc.header, tc.rows)
			if want := build(t, tc.header, tc.rows); !bytes.Equal(file, want) {
				t.Fatalf("the Writer wrote %d bytes not in the documented layout (%d bytes)", len(file), len(want))
			}
			want := tc.header
			want.FormatVersion = snapshots.Version
			for _, rd := range readers {
				t.Run(rd.name, func(t *testing.T) {
					r, err := snapshots.NewReader(rd.wrap(bytes.NewReader(file)))
					if err != nil {
						t.Fatalf("NewReader: %v", err)
					}
					checkHeader(t, r.Header(), want)
					if got := r.Checksum(); got != "" {
						t.Errorf("Checksum before the end: %q, want \"\"", got)
					}
					var got []row
					for {
						k, v, err := r.Next()
						if err == io.EOF {
							break
						}
						if err != nil {
							t.Fatalf("Next after %d rows: %v", len(got), err)
						}
						if len(got) == len(tc.rows) {
							t.Fatalf("Next returned a row past the %d written", len(tc.rows))
						}
						got = append(got, row{string(k), string(v)})
					}
					checkRows(t, got, tc.rows)
					if k, v, err := r.Next(); err != io.EOF || k != nil || v != nil {
						t.Errorf("Next after io.EOF: %q, %q, %v; want io.EOF again", k, v, err)
					}
					if r.Rows() != uint64(len(tc.rows)) {
						t.Errorf("Rows %d, want %d", r.Rows(), len(tc.rows))
					}
					if r.Bytes() != int64(len(file)) {
						t.Errorf("Bytes %d, want the file's %d", r.Bytes(), len(file))
					}
					if got, want := r.Checksum(), digestOf(file); got != want {
						t.Errorf("Checksum %s, want %s", got, want)
					}
				})
			}

			var seen []row
			sum, err := snapshots.Verify(bytes.NewReader(file), func(k, v []byte) error {
				seen = append(seen, row{string(k), string(v)})
				return nil
			})
			if err != nil {
				t.Fatalf("Verify: %v", err)
			}
			checkHeader(t, sum.Header, want)
			checkRows(t, seen, tc.rows)
			if sum.Rows != uint64(len(tc.rows)) || sum.Bytes != int64(len(file)) || sum.Checksum != digestOf(file) {
				t.Errorf("Verify: %d rows, %d bytes, checksum %s; want %d, %d, %s",
					sum.Rows, sum.Bytes, sum.Checksum, len(tc.rows), len(file), digestOf(file))
			}
			if nilEach, err := snapshots.Verify(bytes.NewReader(file), nil); err != nil || !reflect.DeepEqual(nilEach, sum) {
				t.Errorf("Verify without a callback: %+v, %v; want %+v", nilEach, err, sum)
			}
		})
	}
}

// TestWriterHeaderJSON: FormatVersion is not in the JSON (the Reader
// sets it from the binary field); every other field is.
func TestWriterHeaderJSON(t *testing.T) {
	h := fullHeader()
	file := encode(t, h, nil)
	n := binary.BigEndian.Uint32(file[10:14])
	var fields map[string]any
	if err := json.Unmarshal(file[14:14+n], &fields); err != nil {
		t.Fatal(err)
	}
	if _, ok := fields["FormatVersion"]; ok {
		t.Errorf("the header JSON holds FormatVersion: %s", file[14:14+n])
	}
	for _, name := range []string{"ClusterID", "Server", "Index", "LastTime", "Projections", "Created", "OrdoVersion"} {
		if _, ok := fields[name]; !ok {
			t.Errorf("the header JSON lacks %s: %s", name, file[14:14+n])
		}
	}
}

// TestVerifyCallbackError: an error from the callback stops Verify and is
// returned as is, with the rows read so far.
func TestVerifyCallbackError(t *testing.T) {
	file := encode(t, fullHeader(), []row{{"a", "1"}, {"b", "2"}, {"c", "3"}})
	stop := errors.New("stop here")
	calls := 0
	sum, err := snapshots.Verify(bytes.NewReader(file), func(k, v []byte) error {
		calls++
		if string(k) == "b" {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) {
		t.Fatalf("Verify: %v, want the callback's error", err)
	}
	if calls != 2 || sum.Rows != 2 || sum.Checksum != "" {
		t.Errorf("Verify stopped after %d calls with %d rows, checksum %q; want 2, 2, \"\"", calls, sum.Rows, sum.Checksum)
	}
}

// TestWriterRefuses: a key not after the last one, an empty key or one
// over MaxKey is refused with ErrCorrupt, and the Writer stays failed: a
// later good Row and Close return the error too, and no trailer is
// written.
func TestWriterRefuses(t *testing.T) {
	cases := []struct {
		name   string
		before []string // keys written first, accepted
		bad    string
		next   string // a key that would have been fine
	}{
		{"key equal to the last", []string{"a", "b"}, "b", "c"},
		{"key before the last", []string{"a", "c"}, "b", "d"},
		{"prefix of the last", []string{"ab"}, "a", "b"},
		{"empty first key", nil, "", "a"},
		{"empty key after rows", []string{"a"}, "", "b"},
		{"key over MaxKey", []string{"a"}, "b" + strings.Repeat("x", snapshots.MaxKey), "c"},
		{"first key over MaxKey", nil, strings.Repeat("x", snapshots.MaxKey+1), "y"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			w, err := snapshots.NewWriter(&buf, fullHeader())
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range tc.before {
				if err := w.Row([]byte(k), []byte("v")); err != nil {
					t.Fatalf("Row %q: %v", k, err)
				}
			}
			err = w.Row([]byte(tc.bad), []byte("v"))
			if !errors.Is(err, snapshots.ErrCorrupt) {
				t.Fatalf("Row %.20q: %v, want ErrCorrupt", tc.bad, err)
			}
			if w.Rows() != uint64(len(tc.before)) {
				t.Errorf("Rows %d after the refusal, want %d", w.Rows(), len(tc.before))
			}
			if err2 := w.Row([]byte(tc.next), []byte("v")); !errors.Is(err2, snapshots.ErrCorrupt) {
				t.Errorf("Row %q after the refusal: %v, want ErrCorrupt", tc.next, err2)
			}
			if err2 := w.Close(); !errors.Is(err2, snapshots.ErrCorrupt) {
				t.Errorf("Close after the refusal: %v, want ErrCorrupt", err2)
			}
			if err2 := w.Close(); !errors.Is(err2, snapshots.ErrCorrupt) {
				t.Errorf("second Close after the refusal: %v, want ErrCorrupt", err2)
			}
			if _, _, err := readAll(bytes.NewReader(buf.Bytes())); err == io.EOF {
				t.Errorf("what the refused Writer wrote reads as a whole file")
			}
		})
	}
}

// TestWriterHeaderTooLarge: a header whose JSON is over MaxHeader is
// refused before anything is written.
func TestWriterHeaderTooLarge(t *testing.T) {
	var buf bytes.Buffer
	_, err := snapshots.NewWriter(&buf, snapshots.Header{ClusterID: strings.Repeat("c", snapshots.MaxHeader)})
	if err == nil {
		t.Fatal("NewWriter took a header over MaxHeader")
	}
	if buf.Len() != 0 {
		t.Errorf("NewWriter wrote %d bytes before refusing", buf.Len())
	}
}

type failingWriter struct{ err error }

func (w failingWriter) Write([]byte) (int, error) { return 0, w.err }

// TestWriterWriteError: an error of the underlying writer comes back from
// Close (the Writer buffers) and stays.
func TestWriterWriteError(t *testing.T) {
	disk := errors.New("disk full")
	w, err := snapshots.NewWriter(failingWriter{disk}, fullHeader())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Row([]byte("a"), []byte("1")); err != nil && !errors.Is(err, disk) {
		t.Fatalf("Row: %v", err)
	}
	if err := w.Close(); !errors.Is(err, disk) {
		t.Fatalf("Close: %v, want %v", err, disk)
	}
	if err := w.Row([]byte("b"), []byte("2")); !errors.Is(err, disk) {
		t.Errorf("Row after the failure: %v, want %v", err, disk)
	}
	if err := w.Close(); !errors.Is(err, disk) {
		t.Errorf("second Close: %v, want %v", err, disk)
	}
}

// TestWriterReusedBuffers: the Writer keeps its own copy of the last key,
// so a caller may reuse its key and value buffers between rows, as an
// iterator over a store does.
func TestWriterReusedBuffers(t *testing.T) {
	var buf bytes.Buffer
	w, err := snapshots.NewWriter(&buf, fullHeader())
	if err != nil {
		t.Fatal(err)
	}
	key, value := []byte("k0"), []byte("v0")
	var want []row
	for i := range 5 {
		key[1], value[1] = byte('0'+i), byte('0'+i)
		if err := w.Row(key, value); err != nil {
			t.Fatalf("Row %q after rewriting the buffer: %v", key, err)
		}
		want = append(want, row{string(key), string(value)})
	}
	key[1] = '0' // k0 again, before the last key
	if err := w.Row(key, value); !errors.Is(err, snapshots.ErrCorrupt) {
		t.Fatalf("Row %q after %q: %v, want ErrCorrupt", key, "k4", err)
	}

	var good bytes.Buffer
	w, err = snapshots.NewWriter(&good, fullHeader())
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		key[1], value[1] = byte('0'+i), byte('0'+i)
		if err := w.Row(key, value); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	_, rows, err := readAll(bytes.NewReader(good.Bytes()))
	if err != io.EOF {
		t.Fatalf("read: %v", err)
	}
	checkRows(t, rows, want)
}

// TestWriterHeaderNotJSON: a header encoding/json refuses (a Created time
// past year 9999) is refused by NewWriter.
func TestWriterHeaderNotJSON(t *testing.T) {
	var buf bytes.Buffer
	h := fullHeader()
	h.Created = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)
	if _, err := snapshots.NewWriter(&buf, h); err == nil {
		t.Fatal("NewWriter took a header that does not marshal")
	}
}

// TestVerifyRefuses: Verify returns the Reader's error for a bad file.
func TestVerifyRefuses(t *testing.T) {
	file := encode(t, fullHeader(), []row{{"a", "1"}, {"b", "2"}})
	if _, err := snapshots.Verify(bytes.NewReader(file[1:]), nil); !errors.Is(err, snapshots.ErrMagic) {
		t.Errorf("Verify without the first byte: %v, want ErrMagic", err)
	}
	sum, err := snapshots.Verify(bytes.NewReader(file[:len(file)-1]), nil)
	if !errors.Is(err, snapshots.ErrTruncated) || sum.Checksum != "" || sum.Rows != 2 {
		t.Errorf("Verify without the last byte: %+v, %v; want 2 rows, no checksum, ErrTruncated", sum, err)
	}
}

// TestWriterRowAfterClose: a Row after Close is refused, and nothing
// reaches the file after its trailer, even a row larger than the Writer's
// buffer.
func TestWriterRowAfterClose(t *testing.T) {
	var buf bytes.Buffer
	w, err := snapshots.NewWriter(&buf, fullHeader())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Row([]byte("a"), []byte("1")); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	n := buf.Len()
	if err := w.Row([]byte("b"), make([]byte, 2<<20)); err == nil {
		t.Error("Row after Close returned nil")
	}
	if err := w.Close(); err != nil {
		t.Errorf("Close again: %v", err)
	}
	if buf.Len() != n {
		t.Errorf("the file grew from %d to %d bytes after Close", n, buf.Len())
	}
	if _, err := snapshots.Verify(bytes.NewReader(buf.Bytes()), nil); err != nil {
		t.Errorf("Verify: %v", err)
	}
}
