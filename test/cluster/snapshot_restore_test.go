package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections/all"
	"github.com/ordoplane/ordo/storage/archive"
	"net/http"
	"strings"
	"testing"

	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/rebuild"
	"github.com/ordoplane/ordo/storage/kv"
	"github.com/ordoplane/ordo/storage/snapshots"
	"github.com/ordoplane/ordo/test/testagent"
)

// startCluster starts three servers over TCP and returns them once one
// leads and every one has applied what it did.
func startCluster(t *testing.T) []*testagent.Server {
	t.Helper()
	var list []*testagent.Server
	for i := range 3 {
		cfg := testagent.ServerConfig(t.TempDir())
		cfg.Name = fmt.Sprintf("s%d", i+1)
		cfg.BootstrapExpect = 3
		if i > 0 {
			cfg.Join = []string{list[0].HTTP}
		}
		list = append(list, testagent.StartServer(t, cfg))
	}
	l := testagent.WaitForLeader(t, list)
	testagent.WaitFor(t, testagent.ServerTimeout, "every server registered", func() bool {
		n := 0
		projections.NewView(l.A.Store()).Scan("servers", "", false, func(string, projections.Row) error { n++; return nil })
		return n == 3
	})
	return list
}

// followers returns the servers of list that do not lead.
func followers(list []*testagent.Server) []*testagent.Server {
	var out []*testagent.Server
	for _, s := range list {
		if !s.A.Node().IsLeader() {
			out = append(out, s)
		}
	}
	return out
}

// fileStore loads a snapshot file's rows into a store of their own: the
// state the file holds, to compare servers with.
func fileStore(t *testing.T, file []byte) (*kv.Store, snapshots.Header) {
	t.Helper()
	st, err := kv.Open(t.TempDir(), kv.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	w := st.WriteBatch()
	sum, err := snapshots.Verify(bytes.NewReader(file), func(k, v []byte) error { return w.Set(k, v) })
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(false); err != nil {
		t.Fatal(err)
	}
	return st, sum.Header
}

// sameAsFile fails unless the projections s holds are those of the file's
// state with the entries s applied after the restore (at index restored,
// leader-only processors starting again may append) replayed onto it.
func sameAsFile(t *testing.T, s *testagent.Server, file []byte, restored uint64) {
	t.Helper()
	snap := s.A.Store().Snapshot()
	defer snap.Close()
	at, err := projections.NewView(snap).AppliedIndex()
	if err != nil {
		t.Fatal(err)
	}
	want, _ := fileStore(t, file)
	if _, err := rebuild.Replay(context.Background(), snap, want, all.Projections(), at, nil); err != nil {
		t.Fatal(err)
	}
	if d := differing(t, want, snap); len(d) > 0 {
		archive.Scan(snap, restored, 0, func(i uint64, q uint32, data []byte) error {
			ev, _ := events.DecodeEvent(data)
			t.Logf("applied after the restore: %d/%d %s %v", i, q, ev.Type, ev.Keys)
			return nil
		})
		t.Fatalf("%s at %d (restored at %d): projections %v differ from the file's state and what followed", s.Name, at, restored, d)
	}
}

// restoreRecord returns the SnapshotRestored event archived at index.
func restoreRecord(t *testing.T, r kv.Reader, index uint64) *events.SnapshotRestored {
	t.Helper()
	var rec *events.SnapshotRestored
	archive.Scan(r, index, index, func(_ uint64, _ uint32, data []byte) error {
		ev, err := events.DecodeEvent(data)
		if err != nil {
			t.Fatal(err)
		}
		p, err := events.Decode(ev)
		if err != nil {
			t.Fatal(err)
		}
		rec, _ = p.(*events.SnapshotRestored)
		return nil
	})
	if rec == nil {
		t.Fatalf("no SnapshotRestored event at index %d", index)
	}
	return rec
}

// checksum is a file's SHA-256 as a snapshot Reader reports it.
func checksum(file []byte) string {
	sum, _ := snapshots.Verify(bytes.NewReader(file), nil)
	return sum.Checksum
}

func namespaceNames(t *testing.T, r kv.Reader) map[string]bool {
	t.Helper()
	names, err := testagent.StoreNamespaces(r)
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// TestOperatorRestoreAcrossCluster saves a three-server cluster's state
// through a follower, writes more, and restores the file through the
// other follower while the third server is down: every server, the one
// down once it is back, then holds exactly the saved projections at the
// restore's index, and the cluster goes on writing past it. A damaged
// file is refused with 400 and installs nothing.
func TestOperatorRestoreAcrossCluster(t *testing.T) {
	list := startCluster(t)
	l := testagent.WaitForLeader(t, list) // leadership may have moved since startCluster
	for i := range 20 {
		put(t, l.HTTP, fmt.Sprintf("saved-%02d", i))
	}
	fs := followers(list)
	file := testagent.SaveSnapshot(t, fs[0].HTTP) // forwarded to the leader
	want, h := fileStore(t, file)
	if h.Index == 0 || !namespaceNames(t, want)["saved-19"] {
		t.Fatalf("the file holds index %d and namespaces %v", h.Index, namespaceNames(t, want))
	}
	for i := range 10 {
		put(t, l.HTTP, fmt.Sprintf("lost-%02d", i))
	}

	down := fs[1]
	down.Stop(t)
	status, body := testagent.RestoreSnapshot(t, fs[0].HTTP, file)
	if status != http.StatusOK {
		t.Fatalf("restore: %d %s", status, body)
	}
	var res struct{ Index, SnapshotIndex, RecordedAt uint64 }
	if err := json.Unmarshal(body, &res); err != nil {
		t.Fatal(err)
	}
	if res.SnapshotIndex != h.Index || res.Index <= h.Index || res.RecordedAt <= res.Index {
		t.Fatalf("restore answered %s for a file saved at %d", body, h.Index)
	}
	for _, s := range []*testagent.Server{l, fs[0]} {
		testagent.WaitFor(t, testagent.ServerTimeout, s.Name+" to install the restore", func() bool { return s.A.FSM().Applied() >= res.Index })
		sameAsFile(t, s, file, res.Index)
		if names := namespaceNames(t, s.A.Store()); names["lost-00"] || !names["saved-00"] {
			t.Fatalf("%s after the restore holds namespaces %v", s.Name, names)
		}
		testagent.WaitFor(t, testagent.ServerTimeout, s.Name+" to apply the restore's record", func() bool { return s.A.FSM().Applied() >= res.RecordedAt })
		rec := restoreRecord(t, s.A.Store(), res.RecordedAt)
		if rec.Index != res.Index || rec.SnapshotIndex != h.Index || rec.Server != l.A.ID() || rec.Checksum != checksum(file) {
			t.Fatalf("%s records the restore as %+v", s.Name, rec)
		}
	}

	// The leader's processors started again from the restored state: its
	// launcher, stopped for the restart, deregistered its component.
	testagent.WaitFor(t, testagent.ServerTimeout, "the leader's launcher to restart", func() bool {
		found := false
		archive.Scan(l.A.Store(), res.Index, 0, func(_ uint64, _ uint32, data []byte) error {
			ev, err := events.DecodeEvent(data)
			if err != nil || ev.Type != "ComponentDeregistered" {
				return nil
			}
			p, err := events.Decode(ev)
			if err == nil && p.(*events.ComponentDeregistered).Server == l.A.ID() {
				found = true
			}
			return nil
		})
		return found
	})

	// The cluster goes on past the restore's index, the server that was
	// down installs the restore by a snapshot and catches up.
	put(t, l.HTTP, "after")
	down.Restart(t)
	testagent.WaitFor(t, testagent.ServerTimeout, "the restarted server to catch up", func() bool {
		at := l.A.FSM().Applied()
		return at > res.Index && down.A.FSM().Applied() == at && len(differing(t, l.A.Store(), down.A.Store())) == 0
	})
	if names := namespaceNames(t, down.A.Store()); names["lost-00"] || !names["saved-00"] || !names["after"] {
		t.Fatalf("the restarted server holds namespaces %v", names)
	}

	// A damaged file changes nothing.
	before := l.A.FSM().Applied()
	bad := bytes.Clone(file)
	bad[len(bad)/2] ^= 0x20
	if status, body := testagent.RestoreSnapshot(t, l.HTTP, bad); status != http.StatusBadRequest || !strings.Contains(string(body), "snapshot") {
		t.Fatalf("a damaged file answered %d %s", status, body)
	}
	if got := l.A.FSM().Applied(); got != before {
		t.Fatalf("a refused restore moved the applied index from %d to %d", before, got)
	}
	if !namespaceNames(t, l.A.Store())["after"] {
		t.Fatal("a refused restore lost a write")
	}
}
