package backup

import (
	"bytes"
	"context"
	"errors"
	"github.com/ordoplane/ordo/history/backup/backuptest"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/all"
	"github.com/ordoplane/ordo/projections/fsm"
	"github.com/ordoplane/ordo/projections/namespaces"
	"github.com/ordoplane/ordo/projections/projectionstest"
	"github.com/ordoplane/ordo/storage/kv"
	"github.com/ordoplane/ordo/storage/raftlog"
	"github.com/ordoplane/ordo/storage/waittest"
)

// server is one raft node over an FSM, as an agent runs them.
type server struct {
	store *kv.Store
	fsm   *fsm.FSM
	node  *raftlog.Node
}

// startServer starts a raft node on 127.0.0.1 over a fresh FSM; a
// bootstrapped one forms a cluster of its own and is returned once it
// leads.
func startServer(t *testing.T, bootstrap bool) *server {
	t.Helper()
	s := &server{store: projectionstest.OpenStore(t)}
	s.fsm = projectionstest.NewFSM(t, s.store)
	cfg := raftlog.DefaultConfig()
	cfg.ID, cfg.BindAddr, cfg.Dir = "restorer-1", "127.0.0.1:0", t.TempDir()
	cfg.Bootstrap, cfg.NoSync, cfg.LogOutput = bootstrap, true, io.Discard
	cfg.HeartbeatTimeout, cfg.ElectionTimeout, cfg.LeaderLeaseTimeout = 100*time.Millisecond, 100*time.Millisecond, 50*time.Millisecond
	n, err := raftlog.Open(cfg, s.fsm)
	if err != nil {
		t.Fatal(err)
	}
	s.node = n
	t.Cleanup(func() { n.Shutdown() })
	if bootstrap {
		waittest.For(t, 10*time.Second, "the node to lead", n.IsLeader)
	}
	return s
}

func namespaceNames(t testing.TB, r kv.Reader) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	err := projections.NewView(r).Scan(namespaces.Table, "", false, func(key string, _ projections.Row) error {
		out[key] = true
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestRestorerInstalls restores a saved state through raft on a
// one-server cluster whose own state differs: the server then holds the
// saved projections at the index the restore answers (past the saved
// one), Restored was called, the scratch payload is gone, the result
// describes the file, and the cluster goes on writing past the restore.
// A damaged file then installs nothing.
func TestRestorerInstalls(t *testing.T) {
	src := newState(t, 30)
	file, h := save(t, src.store)

	s := startServer(t, true)
	ctx := context.Background()
	appendNS := func(name string) uint64 {
		t.Helper()
		data, err := events.EncodeEntry(projectionstest.Entry(t, "", &events.NamespaceUpserted{Namespace: events.Namespace{Name: name}}))
		if err != nil {
			t.Fatal(err)
		}
		res, index, err := s.node.Append(ctx, data)
		if err != nil {
			t.Fatal(err)
		}
		if r, ok := res.(fsm.Result); !ok || r.Err != nil {
			t.Fatalf("append %s: %v", name, res)
		}
		return index
	}
	lost := appendNS("lost")

	reg := prometheus.NewRegistry()
	dir := t.TempDir()
	var restored atomic.Int32
	r := NewRestorer(RestoreConfig{Node: s.node, Dir: dir, Restored: func() { restored.Add(1) },
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Registerer: reg})
	res, err := r.Restore(ctx, bytes.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	sum, _ := fileRows(t, file)
	if res.SnapshotIndex != h.Index || res.ClusterID != "server-1" || res.Rows != sum.Rows || res.Bytes != int64(len(file)) || res.Checksum != sum.Checksum ||
		res.SavedBy != "saver-7" || res.SavedAt != created.UnixNano() {
		t.Errorf("result %+v; the file holds %+v", res, sum)
	}
	if res.Index <= h.Index || res.Index <= lost {
		t.Errorf("restored at %d; the file was saved at %d, the log held %d", res.Index, h.Index, lost)
	}
	if s.fsm.Applied() != res.Index || projectionstest.AppliedIndex(t, s.store) != res.Index {
		t.Errorf("the FSM applied %d (stored %d), the restore answered %d", s.fsm.Applied(), projectionstest.AppliedIndex(t, s.store), res.Index)
	}
	if restored.Load() != 1 {
		t.Errorf("Restored called %d times", restored.Load())
	}
	srcSums := projectionstest.Checksums(t, src.store, all.Projections())
	if got := projectionstest.Checksums(t, s.store, all.Projections()); len(got) != len(srcSums) {
		t.Fatalf("%d checksums", len(got))
	} else {
		for name, sum := range srcSums {
			if got[name] != sum {
				t.Errorf("projection %s differs from the saved state", name)
			}
		}
	}
	if names := namespaceNames(t, s.store); names["lost"] || !names["ns-3"] {
		t.Errorf("after the restore the server holds namespaces %v", names)
	}
	if left, err := os.ReadDir(dir); err != nil || len(left) != 0 {
		t.Errorf("the scratch directory holds %v (%v)", left, err)
	}
	if c := backuptest.RestoreCounts(t, reg); c["installed"] != 1 || c["invalid"] != 0 || c["failed"] != 0 {
		t.Errorf("restore counts %v", c)
	}

	// The cluster goes on from the restored state.
	if at := appendNS("after"); at <= res.Index || s.fsm.Applied() != at {
		t.Errorf("an append after the restore landed at %d, applied %d; restored at %d", at, s.fsm.Applied(), res.Index)
	}
	if names := namespaceNames(t, s.store); !names["after"] || names["lost"] {
		t.Errorf("after a write past the restore the server holds namespaces %v", names)
	}

	// A damaged file installs nothing.
	before, sums := s.fsm.Applied(), projectionstest.Checksums(t, s.store, all.Projections())
	bad := bytes.Clone(file)
	bad[len(bad)/3] ^= 0x40
	if _, err := r.Restore(ctx, bytes.NewReader(bad)); !errors.Is(err, ErrInvalid) {
		t.Fatalf("a damaged file: %v, want ErrInvalid", err)
	}
	if s.fsm.Applied() != before || restored.Load() != 1 {
		t.Errorf("a refused file moved the applied index from %d to %d, Restored called %d times", before, s.fsm.Applied(), restored.Load())
	}
	for name, sum := range projectionstest.Checksums(t, s.store, all.Projections()) {
		if sums[name] != sum {
			t.Errorf("a refused file changed projection %s", name)
		}
	}
	if left, err := os.ReadDir(dir); err != nil || len(left) != 0 {
		t.Errorf("a refused restore left %v in the scratch directory (%v)", left, err)
	}
	if c := backuptest.RestoreCounts(t, reg); c["installed"] != 1 || c["invalid"] != 1 || c["failed"] != 0 {
		t.Errorf("restore counts %v", c)
	}
}

// TestRestorerNotLeader: a server that does not lead refuses a restore
// before it reads the file.
func TestRestorerNotLeader(t *testing.T) {
	s := startServer(t, false)
	body := &countingReader{r: bytes.NewReader([]byte("anything"))}
	var restored atomic.Int32
	r := NewRestorer(RestoreConfig{Node: s.node, Dir: t.TempDir(), Restored: func() { restored.Add(1) },
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	_, err := r.Restore(context.Background(), body)
	if !errors.Is(err, raftlog.ErrNotLeader) || errors.Is(err, ErrInvalid) {
		t.Errorf("a follower: %v, want ErrNotLeader", err)
	}
	if body.n != 0 || restored.Load() != 0 {
		t.Errorf("a follower read %d bytes of the file, called Restored %d times", body.n, restored.Load())
	}
}

type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.n += n
	return n, err
}

// A restore payload a stop left in the scratch directory is removed when
// the next Restorer is made; other files there are not.
func TestNewRestorerRemovesLeftPayloads(t *testing.T) {
	dir := t.TempDir()
	left, other := filepath.Join(dir, "restore-123.payload"), filepath.Join(dir, "rerun-7")
	for _, p := range []string{left, other} {
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	NewRestorer(RestoreConfig{Dir: dir})
	if _, err := os.Stat(left); !os.IsNotExist(err) {
		t.Fatalf("the left payload is still there (%v)", err)
	}
	if _, err := os.Stat(other); err != nil {
		t.Fatalf("another file was removed: %v", err)
	}
}
