package backup

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ordoplane/ordo/clock/clocktest"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/all"
	"github.com/ordoplane/ordo/projections/fsm"
	"github.com/ordoplane/ordo/projections/projectionstest"
	"github.com/ordoplane/ordo/storage/kv"
	"github.com/ordoplane/ordo/storage/snapshots"
)

// The server-local keyspaces a saved state leaves out (projections'
// shadowPrefix and markerPrefix).
const (
	shadowPrefix = "sh/"
	markerPrefix = "rb/"
)

// created is the Now the tests save with, in a zone other than UTC.
var created = time.Date(2026, 12, 1, 9, 30, 15, 123456789, time.FixedZone("CET", 3600))

// entryTime is the leader time of the test state's entry i.
func entryTime(i int) int64 { return projectionstest.LeaderTime + int64(i)*int64(time.Second) }

// state is a store fed through the FSM as raft feeds it.
type state struct {
	store *kv.Store
	fsm   *fsm.FSM
	n     int // entries applied, at indexes 1..n
}

// newState returns a store holding n entries applied through the FSM: a
// server registered at 1, then namespaces created, updated and deleted,
// some entries carrying two events, entry i at entryTime(i). The store
// also holds keys local to the server (shadow keys, a rebuild marker),
// as a server's might.
func newState(t testing.TB, n int) *state {
	t.Helper()
	s := &state{store: projectionstest.OpenStore(t)}
	s.fsm = projectionstest.NewFSM(t, s.store)
	for i := 1; i <= n; i++ {
		s.apply(t, projectionstest.HistoryPayloads(i)...)
	}
	w := s.store.WriteBatch()
	for _, k := range []string{shadowPrefix + "t/namespaces\x00old", shadowPrefix + "meta/applied", markerPrefix + "namespaces"} {
		if err := w.Set([]byte(k), []byte("local")); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Commit(false); err != nil {
		t.Fatal(err)
	}
	return s
}

// apply applies the next entry, carrying ps, at its own index and time.
func (s *state) apply(t testing.TB, ps ...events.Payload) {
	t.Helper()
	s.n++
	e := projectionstest.Entry(t, fmt.Sprintf("cmd-%d", s.n), ps...)
	e.Time = entryTime(s.n)
	if res := projectionstest.ApplyOne(t, s.fsm, uint64(s.n), e); res.Err != nil {
		t.Fatalf("entry %d: %v", s.n, res.Err)
	}
}

type row struct{ k, v string }

// savedRows returns every key of r outside the server-local keyspaces,
// in key order.
func savedRows(t testing.TB, r kv.Reader) (saved []row, local int) {
	t.Helper()
	err := r.Scan(nil, nil, false, func(k, v []byte) error {
		if bytes.HasPrefix(k, []byte(shadowPrefix)) || bytes.HasPrefix(k, []byte(markerPrefix)) {
			local++
			return nil
		}
		saved = append(saved, row{string(k), string(v)})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return saved, local
}

// fileRows checks a snapshot file whole and returns its summary and rows.
func fileRows(t testing.TB, file []byte) (snapshots.Summary, []row) {
	t.Helper()
	var rows []row
	sum, err := snapshots.Verify(bytes.NewReader(file), func(k, v []byte) error {
		rows = append(rows, row{string(k), string(v)})
		return nil
	})
	if err != nil {
		t.Fatalf("the saved file does not check out: %v", err)
	}
	return sum, rows
}

func saveOptions() SaveOptions {
	return SaveOptions{Server: "saver-7", Version: "9.8.7-test", Projections: all.Projections(), Clock: clocktest.NewClock(created)}
}

// save saves src with saveOptions and returns the file and the header
// Save answered.
func save(t testing.TB, src kv.Reader) ([]byte, snapshots.Header) {
	t.Helper()
	var b bytes.Buffer
	h, err := Save(&b, src, saveOptions())
	if err != nil {
		t.Fatal(err)
	}
	return b.Bytes(), h
}

func sameRows(t testing.TB, what string, got, want []row) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d rows, want %d", what, len(got), len(want))
	}
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			t.Fatalf("%s: row %d is %q=%x, want %q=%x", what, i, got[i].k, got[i].v, want[i].k, want[i].v)
		}
	}
}

// TestSaveStore: Save of a store fed through the FSM writes a file that
// checks out, whose header describes the state (the applied index, the
// registered server as the cluster, the last entry's time, every
// projection's stored version, the saving server as given) and whose
// rows are exactly the store's keys but the server-local ones.
func TestSaveStore(t *testing.T) {
	s := newState(t, 40)
	snap := s.store.Snapshot()
	defer snap.Close()
	file, h := save(t, snap)
	sum, rows := fileRows(t, file)

	got := sum.Header
	if got.FormatVersion != snapshots.Version {
		t.Errorf("format version %d, want %d", got.FormatVersion, snapshots.Version)
	}
	if s.fsm.Applied() != 40 || got.Index != s.fsm.Applied() {
		t.Errorf("header index %d; the FSM applied %d, want 40", got.Index, s.fsm.Applied())
	}
	if got.ClusterID != "server-1" {
		t.Errorf("cluster %q, want the registered server-1", got.ClusterID)
	}
	if got.LastTime != entryTime(40) {
		t.Errorf("last time %d, want the last entry's %d", got.LastTime, entryTime(40))
	}
	if got.Server != "saver-7" || got.OrdoVersion != "9.8.7-test" {
		t.Errorf("saved by %q version %q", got.Server, got.OrdoVersion)
	}
	if !got.Created.Equal(created) || got.Created.Location() != time.UTC {
		t.Errorf("created %v, want %v in UTC", got.Created, created)
	}
	if len(got.Projections) != len(all.Projections()) {
		t.Errorf("header lists %d projections, the state holds %d: %v", len(got.Projections), len(all.Projections()), got.Projections)
	}
	for _, p := range all.Projections() {
		stored, err := projections.StoredVersion(snap, p.Name())
		if err != nil {
			t.Fatal(err)
		}
		if v, ok := got.Projections[p.Name()]; !ok || v != stored || v != p.Version() {
			t.Errorf("projection %s: header version %d (listed %v), stored %d, code %d", p.Name(), v, ok, stored, p.Version())
		}
	}
	h.FormatVersion = got.FormatVersion
	if fmt.Sprint(h) != fmt.Sprint(got) {
		t.Errorf("Save answered header %+v, the file holds %+v", h, got)
	}

	want, local := savedRows(t, snap)
	if local != 3 {
		t.Fatalf("the store holds %d server-local keys, want the 3 written", local)
	}
	sameRows(t, "the file", rows, want)
	if sum.Rows != uint64(len(want)) || sum.Bytes != int64(len(file)) {
		t.Errorf("summary counts %d rows of %d bytes; the file holds %d rows in %d bytes", sum.Rows, sum.Bytes, len(want), len(file))
	}
	for _, r := range rows {
		if strings.HasPrefix(r.k, shadowPrefix) || strings.HasPrefix(r.k, markerPrefix) {
			t.Errorf("the file holds the server-local key %q", r.k)
		}
	}
	var hasApplied, hasArchive, hasNamespaces bool
	for _, r := range rows {
		hasApplied = hasApplied || r.k == "meta/applied"
		hasArchive = hasArchive || strings.HasPrefix(r.k, "log/")
		hasNamespaces = hasNamespaces || strings.HasPrefix(r.k, "t/namespaces\x00")
	}
	if !hasApplied || !hasArchive || !hasNamespaces {
		t.Errorf("the file misses the applied index (%v), the archive (%v) or the namespaces (%v)", hasApplied, hasArchive, hasNamespaces)
	}
}

// TestSaveReadsTheSnapshot: Save describes and writes the snapshot it is
// given, not the store as it is by the time it runs.
func TestSaveReadsTheSnapshot(t *testing.T) {
	s := newState(t, 12)
	snap := s.store.Snapshot()
	defer snap.Close()
	want, _ := savedRows(t, snap)
	s.apply(t, &events.NamespaceUpserted{Namespace: events.Namespace{Name: "after-the-snapshot"}})
	s.apply(t, &events.NamespaceDeleted{Name: "ns-1"})

	file, _ := save(t, snap)
	sum, rows := fileRows(t, file)
	if sum.Header.Index != 12 || sum.Header.LastTime != entryTime(12) {
		t.Errorf("header at %d, time %d; the snapshot stands at 12, time %d", sum.Header.Index, sum.Header.LastTime, entryTime(12))
	}
	sameRows(t, "the file of the snapshot", rows, want)
	for _, r := range rows {
		if strings.Contains(r.k, "after-the-snapshot") {
			t.Errorf("the file holds %q, written after the snapshot", r.k)
		}
	}

	// The store as it is now saves at its own index.
	now, _ := save(t, s.store)
	if sum, _ := fileRows(t, now); sum.Header.Index != 14 || sum.Header.LastTime != entryTime(14) {
		t.Errorf("the live store saved at %d, time %d; want 14, %d", sum.Header.Index, sum.Header.LastTime, entryTime(14))
	}
}

// TestSaveEmptyStore: an empty store saves as a file with no rows and an
// empty header (no cluster, index 0, no last time), and without Now no
// creation time.
func TestSaveEmptyStore(t *testing.T) {
	store := projectionstest.OpenStore(t)
	var b bytes.Buffer
	opts := saveOptions()
	opts.Clock = nil
	h, err := Save(&b, store, opts)
	if err != nil {
		t.Fatal(err)
	}
	sum, rows := fileRows(t, b.Bytes())
	if len(rows) != 0 || sum.Rows != 0 {
		t.Errorf("an empty store saved %d rows", len(rows))
	}
	if h.Index != 0 || h.ClusterID != "" || h.LastTime != 0 || !h.Created.IsZero() || sum.Header.Index != 0 {
		t.Errorf("header of an empty store: %+v", h)
	}
	for name, v := range sum.Header.Projections {
		if v != 0 {
			t.Errorf("an empty store lists projection %s at version %d", name, v)
		}
	}
}

// TestSaveNoServerRegistered: an archive with no ServerRegistered event
// names no cluster.
func TestSaveNoServerRegistered(t *testing.T) {
	s := &state{store: projectionstest.OpenStore(t)}
	s.fsm = projectionstest.NewFSM(t, s.store)
	s.apply(t, &events.NamespaceUpserted{Namespace: events.Namespace{Name: "a"}})
	file, _ := save(t, s.store)
	if sum, _ := fileRows(t, file); sum.Header.ClusterID != "" || sum.Header.Index != 1 || sum.Header.LastTime != entryTime(1) {
		t.Errorf("header %+v", sum.Header)
	}
}

// failWriter fails every write after the first n bytes.
type failWriter struct{ n int }

func (w *failWriter) Write(b []byte) (int, error) {
	if len(b) > w.n {
		k := w.n
		w.n = 0
		return k, os.ErrClosed
	}
	w.n -= len(b)
	return len(b), nil
}

// TestSaveWriteError: a write failing part-way fails Save.
func TestSaveWriteError(t *testing.T) {
	s := newState(t, 10)
	for _, n := range []int{0, 100} {
		if _, err := Save(&failWriter{n: n}, s.store, saveOptions()); err == nil {
			t.Errorf("a writer failing after %d bytes: no error", n)
		}
	}
}
