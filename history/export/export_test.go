package export_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/history/export"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/all"
	"github.com/ordoplane/ordo/projections/namespaces"
	"github.com/ordoplane/ordo/projections/projectionstest"
	"github.com/ordoplane/ordo/projections/rebuild"
	"github.com/ordoplane/ordo/storage/archive"
	"github.com/ordoplane/ordo/storage/kv"
)

var created = time.Date(2026, 11, 30, 14, 2, 0, 0, time.UTC)

// history returns a store fed through the FSM with n entries: a server
// registered at 1, then namespaces created, updated and deleted, two
// events in every fourth entry.
func history(t testing.TB, n int) *kv.Store {
	t.Helper()
	store := projectionstest.OpenStore(t)
	fsm := projectionstest.NewFSM(t, store)
	for i := 1; i <= n; i++ {
		ps := projectionstest.HistoryPayloads(i)
		if res := projectionstest.ApplyOne(t, fsm, uint64(i), projectionstest.Entry(t, fmt.Sprintf("cmd-%d", i), ps...)); res.Err != nil {
			t.Fatalf("entry %d: %v", i, res.Err)
		}
	}
	return store
}

func exportTo(t testing.TB, src kv.Reader, opts export.Options) ([]byte, export.Header) {
	t.Helper()
	var b bytes.Buffer
	if opts.Created.IsZero() {
		opts.Created = created
	}
	if opts.ScratchDir == "" {
		opts.ScratchDir = t.TempDir()
	}
	h, err := export.Export(&b, src, opts)
	if err != nil {
		t.Fatal(err)
	}
	return b.Bytes(), h
}

type archived struct {
	index uint64
	seq   uint32
	data  []byte
}

func archiveOf(t testing.TB, r kv.Reader, from, to uint64) []archived {
	t.Helper()
	var out []archived
	if err := archive.Scan(r, from, to, func(index uint64, seq uint32, data []byte) error {
		out = append(out, archived{index, seq, bytes.Clone(data)})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestExportRoundTrip: export → decode gives the header written and every
// archived event byte for byte, and the trailer is the SHA-256 of the rest.
func TestExportRoundTrip(t *testing.T) {
	store := history(t, 40)
	snap := store.Snapshot()
	defer snap.Close()
	file, h := exportTo(t, snap, export.Options{From: 1, To: 30, Server: "exporter", OrdoVersion: "test"})
	if h.ClusterID != "server-1" || h.ClusterIDSource != export.ClusterFirstServer || h.Server != "exporter" {
		t.Errorf("cluster %q from %q, server %q", h.ClusterID, h.ClusterIDSource, h.Server)
	}
	want := archiveOf(t, snap, 1, 30)
	if h.FirstIndex != 1 || h.LastIndex != 30 || h.Events != uint64(len(want)) || h.StateIndex != 0 || !h.Created.Equal(created) {
		t.Errorf("header %+v, want [1, 30] with %d events", h, len(want))
	}

	r, err := export.NewReader(bytes.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	got := r.Header()
	if got.FormatVersion != export.Version {
		t.Errorf("format version %d", got.FormatVersion)
	}
	got.FormatVersion = 0
	if fmt.Sprint(got) != fmt.Sprint(h) {
		t.Errorf("decoded header %+v, wrote %+v", got, h)
	}
	var recs []archived
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if rec.Kind != export.KindEvent {
			t.Fatalf("record kind %c in a file without state", rec.Kind)
		}
		recs = append(recs, archived{rec.Index, rec.Seq, bytes.Clone(rec.Data)})
	}
	if len(recs) != len(want) {
		t.Fatalf("%d events decoded, %d archived", len(recs), len(want))
	}
	for i := range want {
		if recs[i].index != want[i].index || recs[i].seq != want[i].seq || !bytes.Equal(recs[i].data, want[i].data) {
			t.Fatalf("event %d: %d/%d differs from the archive's %d/%d", i, recs[i].index, recs[i].seq, want[i].index, want[i].seq)
		}
	}
	sum := sha256.Sum256(file[:len(file)-sha256.Size-1])
	if r.Checksum() != hex.EncodeToString(sum[:]) || !bytes.Equal(file[len(file)-sha256.Size:], sum[:]) || file[len(file)-sha256.Size-1] != 'T' {
		t.Errorf("trailer %x, checksum %s; content hashes to %x", file[len(file)-sha256.Size-1:], r.Checksum(), sum)
	}
	if s, err := export.Verify(bytes.NewReader(file)); err != nil || s.Events != h.Events || s.Bytes != int64(len(file)) {
		t.Errorf("Verify = %+v, %v", s, err)
	}
}

// TestExportErrors: an empty range and a range with no events.
func TestExportErrors(t *testing.T) {
	store := history(t, 5)
	var b bytes.Buffer
	if _, err := export.Export(&b, store, export.Options{From: 9, To: 3}); err == nil || b.Len() > 0 {
		t.Errorf("from 9 to 3: %v, %d bytes", err, b.Len())
	}
	_, err := export.Export(&b, store, export.Options{From: 6})
	if !errors.Is(err, export.ErrNoEvents) || b.Len() > 0 || !strings.Contains(err.Error(), "last index is 5") {
		t.Errorf("past the end: %v, %d bytes", err, b.Len())
	}
}

// TestClusterIDFallback: an archive registering no server is exported with
// the exporting server's id, and says so.
func TestClusterIDFallback(t *testing.T) {
	store := projectionstest.OpenStore(t)
	fsm := projectionstest.NewFSM(t, store)
	projectionstest.ApplyOne(t, fsm, 1, projectionstest.Entry(t, "c", &events.NamespaceUpserted{Namespace: events.Namespace{Name: "a"}}))
	_, h := exportTo(t, store, export.Options{Server: "me"})
	if h.ClusterID != "me" || h.ClusterIDSource != export.ClusterExportingServer {
		t.Errorf("cluster %q from %q", h.ClusterID, h.ClusterIDSource)
	}
}

func writeFile(t testing.TB, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "h.olog")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// rebuilt returns a store holding every projection rebuilt from src's
// archive up to index to.
func rebuilt(t testing.TB, src kv.Reader, to uint64) *kv.Store {
	t.Helper()
	dst := projectionstest.OpenStore(t)
	if _, err := rebuild.Rebuild(src, dst, all.Projections(), to, nil); err != nil {
		t.Fatal(err)
	}
	return dst
}

// TestLoad: a whole export loaded into an empty store holds the live
// projections (checksum per projection) and the live archive.
func TestLoad(t *testing.T) {
	store := history(t, 40)
	file, h := exportTo(t, store, export.Options{})
	dst := projectionstest.OpenStore(t)
	st, err := export.Load(writeFile(t, file), dst, all.Projections())
	if err != nil {
		t.Fatal(err)
	}
	if st.Events != h.Events || st.StateRows != 0 || st.Checksum == "" {
		t.Errorf("load stats %+v", st)
	}
	want, got := projectionstest.Checksums(t, store, all.Projections()), projectionstest.Checksums(t, dst, all.Projections())
	for name, sum := range want {
		if got[name] != sum {
			t.Errorf("projection %s differs after load", name)
		}
	}
	if a, b := projectionstest.AppliedIndex(t, store), projectionstest.AppliedIndex(t, dst); a != b {
		t.Errorf("applied index %d, live %d", b, a)
	}
	la, lb := archiveOf(t, store, 1, 0), archiveOf(t, dst, 1, 0)
	if len(la) != len(lb) || projectionstest.ArchiveLen(t, dst) != uint64(len(la)) {
		t.Fatalf("archive of %d events loaded as %d (len %d)", len(la), len(lb), projectionstest.ArchiveLen(t, dst))
	}
	for i := range la {
		if !bytes.Equal(la[i].data, lb[i].data) {
			t.Fatalf("archived event %d differs", i)
		}
	}
	if _, err := export.Load(writeFile(t, file), dst, all.Projections()); err == nil {
		t.Error("load into a store that is not empty")
	}
}

// TestLoadSlice: a slice exported with its base state loads into what a
// rebuild up to its last index holds; without it, only what the slice's
// events build from nothing.
func TestLoadSlice(t *testing.T) {
	store := history(t, 40)
	file, h := exportTo(t, store, export.Options{From: 21, To: 33, State: true})
	if h.StateIndex != 20 || h.StateRows == 0 || h.FirstIndex != 21 || h.LastIndex != 33 {
		t.Fatalf("header %+v", h)
	}
	dst := projectionstest.OpenStore(t)
	st, err := export.Load(writeFile(t, file), dst, all.Projections())
	if err != nil {
		t.Fatal(err)
	}
	if st.StateRows != h.StateRows || st.Events != h.Events {
		t.Errorf("load stats %+v, header %+v", st, h)
	}
	ref := rebuilt(t, store, 33)
	want, got := projectionstest.Checksums(t, ref, all.Projections()), projectionstest.Checksums(t, dst, all.Projections())
	for name, sum := range want {
		if got[name] != sum {
			t.Errorf("projection %s: the slice with its state differs from a rebuild to 33", name)
		}
	}
	if a, b := projectionstest.AppliedIndex(t, ref), projectionstest.AppliedIndex(t, dst); a != b {
		t.Errorf("applied index %d, rebuilt %d", b, a)
	}
	if got := archiveOf(t, dst, 1, 0); len(got) != int(h.Events) || got[0].index != 21 {
		t.Errorf("archive after load: %d events from %d", len(got), got[0].index)
	}

	// Without the state: other-4 (created at 4) is not there, other-24 is.
	bare, h2 := exportTo(t, store, export.Options{From: 21, To: 33})
	if h2.StateIndex != 0 || h2.StateRows != 0 {
		t.Fatalf("header %+v", h2)
	}
	dst2 := projectionstest.OpenStore(t)
	if _, err := export.Load(writeFile(t, bare), dst2, all.Projections()); err != nil {
		t.Fatal(err)
	}
	v := projections.NewView(dst2)
	if _, err := namespaces.Get(v, "other-4"); !errors.Is(err, projections.ErrNotFound) {
		t.Errorf("other-4 without the base state: %v", err)
	}
	if _, err := namespaces.Get(v, "other-24"); err != nil {
		t.Errorf("other-24: %v", err)
	}
}

// TestDecodeErrors: every damage is found, with an error that says what.
func TestDecodeErrors(t *testing.T) {
	store := history(t, 12)
	good, h := exportTo(t, store, export.Options{From: 5, To: 10, State: true})
	hdrLen := int(binary.BigEndian.Uint32(good[10:14]))
	body := 14 + hdrLen // the first record
	mutate := func(f func(b []byte) []byte) []byte { return f(bytes.Clone(good)) }
	// rehash recomputes the trailer, so only the damage f makes is wrong.
	rehash := func(b []byte) []byte {
		n := len(b) - sha256.Size
		sum := sha256.Sum256(b[:n-1])
		copy(b[n:], sum[:])
		return b
	}
	withHeader := func(change func(*export.Header)) []byte {
		hh := h
		change(&hh)
		j, _ := json.Marshal(hh)
		var b []byte
		b = append(b, good[:10]...)
		b = binary.BigEndian.AppendUint32(b, uint32(len(j)))
		b = append(b, j...)
		b = append(b, good[body:]...)
		return rehash(b)
	}
	for _, tc := range []struct {
		name string
		file []byte
		want error
		text string
	}{
		{"empty", nil, export.ErrMagic, "shorter than the magic"},
		{"not ours", []byte("PK\x03\x04 a zip file, say"), export.ErrMagic, `starts with "PK\x03\x04 a z"`},
		{"newer version", mutate(func(b []byte) []byte { b[9] = 2; return b }), export.ErrVersion, "format version 2; this ordo reads versions 1 to 1"},
		{"huge header", mutate(func(b []byte) []byte { b[10] = 0x7f; return b }), export.ErrCorrupt, "header of"},
		{"header not JSON", mutate(func(b []byte) []byte { b[14] = '!'; return b }), export.ErrCorrupt, "header:"},
		{"cut in the header", good[:20], export.ErrTruncated, "in the middle of a record"},
		{"cut in a record", good[:body+40], export.ErrTruncated, "in the middle of a record"},
		{"cut before the trailer", good[:len(good)-sha256.Size-1], export.ErrTruncated, "no trailer"},
		{"cut in the trailer", good[:len(good)-5], export.ErrTruncated, "trailer"},
		{"a flipped bit", mutate(func(b []byte) []byte { b[len(b)-60] ^= 1; return b }), export.ErrChecksum, "damaged after it was written"},
		{"a flipped checksum", mutate(func(b []byte) []byte { b[len(b)-1] ^= 1; return b }), export.ErrChecksum, "the trailer says"},
		{"data after the trailer", append(bytes.Clone(good), 0), export.ErrCorrupt, "data after the trailer"},
		{"unknown record", mutate(func(b []byte) []byte { b[body] = 'X'; return rehash(b) }), export.ErrCorrupt, "unknown record tag 0x58"},
		{"fewer events than announced", withHeader(func(h *export.Header) { h.Events++ }), export.ErrCorrupt, "the header announces"},
		{"more events than announced", withHeader(func(h *export.Header) { h.Events-- }), export.ErrCorrupt, "more events than"},
		{"state rows without a state index", withHeader(func(h *export.Header) { h.StateIndex = 0 }), export.ErrCorrupt, "without a state index"},
		{"range that is not the events'", withHeader(func(h *export.Header) { h.LastIndex = 11; h.To = 11 }), export.ErrCorrupt, "events span"},
		{"first after last", withHeader(func(h *export.Header) { h.FirstIndex = 99 }), export.ErrCorrupt, "first index 99 after last index"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := export.Verify(bytes.NewReader(tc.file))
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.text) {
				t.Fatalf("Verify = %v; want %v saying %q", err, tc.want, tc.text)
			}
			// Load refuses it too, and says which file.
			path := writeFile(t, tc.file)
			_, err = export.Load(path, projectionstest.OpenStore(t), all.Projections())
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), path) {
				t.Fatalf("Load = %v; want %v naming the file", err, tc.want)
			}
		})
	}
}

// TestWriterChecksRecords: the Writer refuses records the header does not
// announce, out of order, and a close with records missing.
func TestWriterChecksRecords(t *testing.T) {
	h := export.Header{From: 1, FirstIndex: 3, LastIndex: 5, Events: 2}
	w, err := export.NewWriter(io.Discard, h)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteState([]byte("k"), nil); !errors.Is(err, export.ErrCorrupt) {
		t.Errorf("state row without a state index: %v", err)
	}
	w, _ = export.NewWriter(io.Discard, h)
	if err := w.WriteEvent(4, 0, nil); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteEvent(3, 0, nil); !errors.Is(err, export.ErrCorrupt) {
		t.Errorf("out of order: %v", err)
	}
	w, _ = export.NewWriter(io.Discard, h)
	w.WriteEvent(3, 0, nil)
	if err := w.Close(); !errors.Is(err, export.ErrCorrupt) {
		t.Errorf("close with an event missing: %v", err)
	}
}
