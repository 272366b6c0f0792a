package backup

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/ordoplane/ordo/projections/all"
	"github.com/ordoplane/ordo/projections/fsm"
	"github.com/ordoplane/ordo/projections/projectionstest"
	"github.com/ordoplane/ordo/storage/archive"
	"github.com/ordoplane/ordo/storage/snapshots"
)

// payloadFile returns a new file for a payload in a temporary directory.
func payloadFile(t testing.TB) *os.File {
	t.Helper()
	f, err := os.Create(filepath.Join(t.TempDir(), "restore.payload"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// TestWritePayloadRestores: the payload of a valid file, its index set,
// is what the FSM's Restore installs: a fresh FSM on an empty store then
// holds the saved projections and archive, the saved rows, and the
// payload's index as its applied index, not the saved one.
func TestWritePayloadRestores(t *testing.T) {
	src := newState(t, 40)
	file, _ := save(t, src.store)
	want, _ := savedRows(t, src.store)

	f := payloadFile(t)
	size, sum, err := writePayload(f, bytes.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	if sum.Header.Index != 40 || sum.Header.ClusterID != "server-1" || sum.Rows != uint64(len(want)) || sum.Bytes != int64(len(file)) || sum.Checksum == "" {
		t.Errorf("summary %+v of a file of %d rows, %d bytes", sum, len(want), len(file))
	}
	if st, err := f.Stat(); err != nil || st.Size() != size {
		t.Fatalf("payload size %d, the file holds %v (%v)", size, st.Size(), err)
	}
	const index = 5000
	if err := fsm.SetRestoreIndex(f, index); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	var at [8]byte
	if _, err := f.ReadAt(at[:], fsm.RestoreIndexOffset); err != nil || binary.BigEndian.Uint64(at[:]) != index {
		t.Fatalf("the payload names index %d (%v), want %d", binary.BigEndian.Uint64(at[:]), err, index)
	}

	dst := projectionstest.OpenStore(t)
	sm := projectionstest.NewFSM(t, dst)
	if err := sm.Restore(f); err != nil {
		t.Fatalf("the FSM refused the payload: %v", err)
	}
	if sm.Applied() != index || projectionstest.AppliedIndex(t, dst) != index {
		t.Errorf("applied %d, stored %d; want the payload's %d", sm.Applied(), projectionstest.AppliedIndex(t, dst), index)
	}
	srcSums := projectionstest.Checksums(t, src.store, all.Projections())
	dstSums := projectionstest.Checksums(t, dst, all.Projections())
	for _, p := range all.Projections() {
		if srcSums[p.Name()] != dstSums[p.Name()] {
			t.Errorf("projection %s: checksum %x restored, %x saved", p.Name(), dstSums[p.Name()], srcSums[p.Name()])
		}
	}
	if n, m := projectionstest.ArchiveLen(t, dst), projectionstest.ArchiveLen(t, src.store); n != m || n == 0 {
		t.Errorf("the restored archive holds %d events, the saved %d", n, m)
	}
	if last, err := archive.Last(dst); err != nil || last != 40 {
		t.Errorf("the restored archive ends at %d (%v), want 40", last, err)
	}

	// Every saved row is restored as it was, but the applied index and
	// the restore's own record of its index; no server-local key travels.
	got, local := savedRows(t, dst)
	if local != 0 {
		t.Errorf("the restored store holds %d server-local keys", local)
	}
	strip := func(rows []row) []row {
		var out []row
		for _, r := range rows {
			if r.k != "meta/applied" && r.k != "meta/restored" {
				out = append(out, r)
			}
		}
		return out
	}
	sameRows(t, "the restored store", strip(got), strip(want))

	// A payload at an index the FSM applied already is skipped.
	f2 := payloadFile(t)
	if _, _, err := writePayload(f2, bytes.NewReader(file)); err != nil {
		t.Fatal(err)
	}
	if err := fsm.SetRestoreIndex(f2, index-1); err != nil {
		t.Fatal(err)
	}
	if _, err := f2.Seek(0, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	if err := sm.Restore(f2); err != nil || sm.Applied() != index {
		t.Errorf("an older payload: %v, applied %d, want %d kept", err, sm.Applied(), index)
	}
}

// TestWritePayloadInvalid: a file that does not check out whole is
// refused with an error wrapping ErrInvalid (and the format's own error).
func TestWritePayloadInvalid(t *testing.T) {
	file, _ := save(t, newState(t, 20).store)
	var empty bytes.Buffer
	if _, err := Save(&empty, projectionstest.OpenStore(t), saveOptions()); err != nil {
		t.Fatal(err)
	}
	var future bytes.Buffer
	future.Write(file)
	binary.BigEndian.PutUint16(future.Bytes()[len(snapshots.Magic):], snapshots.Version+1)

	flipped := func(at int) []byte {
		b := bytes.Clone(file)
		b[at] ^= 0x01
		return b
	}
	for _, tc := range []struct {
		name   string
		in     []byte
		cause  error
		phrase string
	}{
		{"empty input", nil, snapshots.ErrMagic, ""},
		{"not a snapshot file", []byte("ORDOLOG\nthis is not a state snapshot at all"), snapshots.ErrMagic, ""},
		{"a kv export", []byte("ordo-kv-1\n\x03\x01abc"), snapshots.ErrMagic, ""},
		{"a future format", future.Bytes(), snapshots.ErrVersion, ""},
		{"cut after the header", file[:len(snapshots.Magic)+6+20], snapshots.ErrTruncated, ""},
		{"truncated in the rows", file[:len(file)/2], snapshots.ErrTruncated, ""},
		{"the trailer cut short", file[:len(file)-1], snapshots.ErrTruncated, ""},
		{"a bit flipped in the rows", flipped(len(file) / 2), nil, ""},
		{"a bit flipped in the checksum", flipped(len(file) - 1), snapshots.ErrChecksum, ""},
		{"no rows", empty.Bytes(), nil, "no rows"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := payloadFile(t)
			_, _, err := writePayload(f, bytes.NewReader(tc.in))
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("err = %v, want one wrapping ErrInvalid", err)
			}
			if tc.cause != nil && !errors.Is(err, tc.cause) {
				t.Errorf("err = %v, want one wrapping %v too", err, tc.cause)
			}
			if !snapshots.IsInvalid(err) && tc.phrase == "" {
				t.Errorf("err = %v names no format error", err)
			}
			if tc.phrase != "" && !strings.Contains(err.Error(), tc.phrase) {
				t.Errorf("err = %v, want it to say %q", err, tc.phrase)
			}
		})
	}
}

// TestWritePayloadReadError: a file that cannot be read (the upload
// broke) fails, but is not called invalid: the file may be fine.
func TestWritePayloadReadError(t *testing.T) {
	file, _ := save(t, newState(t, 10).store)
	broken := io.MultiReader(bytes.NewReader(file[:len(file)/2]), iotest.ErrReader(io.ErrClosedPipe))
	_, _, err := writePayload(payloadFile(t), broken)
	if err == nil || errors.Is(err, ErrInvalid) || !errors.Is(err, io.ErrClosedPipe) {
		t.Errorf("a broken upload: %v, want the read error, not ErrInvalid", err)
	}
}

// TestWritePayloadWriteError: a payload that cannot be written fails,
// not as an invalid file.
func TestWritePayloadWriteError(t *testing.T) {
	file, _ := save(t, newState(t, 10).store)
	f := payloadFile(t)
	f.Close()
	_, _, err := writePayload(f, bytes.NewReader(file))
	if err == nil || errors.Is(err, ErrInvalid) {
		t.Errorf("a closed payload file: %v, want an error other than ErrInvalid", err)
	}
}
