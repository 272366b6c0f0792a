package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"github.com/ordoplane/ordo/history/backup/backuptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/keyring"
	"github.com/ordoplane/ordo/storage/snapshots"
)

// listNamespaces returns the names `ordo namespace list -json` prints.
func listNamespaces(t *testing.T, addr string) map[string]bool {
	t.Helper()
	code, stdout, stderr := runCLI("namespace", "list", "-json", "-address", addr)
	if code != 0 {
		t.Fatalf("namespace list: %d %s", code, stderr)
	}
	var list []struct{ Name string }
	if err := json.Unmarshal([]byte(stdout), &list); err != nil {
		t.Fatalf("namespace list -json: %v\n%s", err, stdout)
	}
	out := map[string]bool{}
	for _, ns := range list {
		out[ns.Name] = true
	}
	return out
}

func applyNamespace(t *testing.T, addr, name string) {
	t.Helper()
	if code, _, stderr := runCLI("namespace", "apply", "-address", addr, "-description", "made by the snapshot test", name); code != 0 {
		t.Fatalf("namespace apply %s: %d %s", name, code, stderr)
	}
}

// tableRows returns the Rows cell of table's line in inspect's table.
func tableRows(t *testing.T, out, table string) string {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[0] == table {
			return f[1]
		}
	}
	t.Fatalf("inspect lists no table %s:\n%s", table, out)
	return ""
}

// fileTableRows counts a snapshot file's rows of table, checking it whole.
func fileTableRows(t *testing.T, path, table string) (snapshots.Summary, int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	sum, err := snapshots.Verify(f, func(k, _ []byte) error {
		if tb, ok := projections.KeyTable(k); ok && tb == table {
			n++
		}
		return nil
	})
	if err != nil {
		t.Fatalf("%s does not check out: %v", path, err)
	}
	return sum, n
}

var (
	savedLine    = regexp.MustCompile(`^Saved the state of cluster (\S+) at index (\d+) to (.+)\n(\d+) rows, (\d+) bytes, SHA-256 ([0-9a-f]{64})\n$`)
	restoredLine = regexp.MustCompile(`^Restored the state of cluster (\S+) saved at index (\d+) \((\d+) rows, SHA-256 ([0-9a-f]{64})\)\nThe cluster now stands at index (\d+)\nRecorded in the log at index (\d+) \(ordo history server <leader>\)\n$`)
)

func atoi(t *testing.T, s string) uint64 {
	t.Helper()
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestSnapshotSaveInspectRestore saves a dev server's state with the
// CLI, inspects the file, writes more, restores the file and finds the
// saved state back at a later index, without what was written after the
// save. A damaged file is refused by the CLI before anything is sent,
// and a save to a missing directory fails cleanly.
func TestSnapshotSaveInspectRestore(t *testing.T) {
	a, addr := startJobAgent(t)
	saved := []string{"snap-a", "snap-b", "snap-c"}
	for _, ns := range saved {
		applyNamespace(t, addr, ns)
	}
	before := listNamespaces(t, addr)
	for _, ns := range append(saved, "default") {
		if !before[ns] {
			t.Fatalf("namespace %s not listed before the save: %v", ns, before)
		}
	}

	// save
	dir := t.TempDir()
	file := filepath.Join(dir, "state.snap")
	code, stdout, stderr := runCLI("operator", "snapshot", "save", "-address", addr, file)
	if code != 0 {
		t.Fatalf("save: %d %s", code, stderr)
	}
	m := savedLine.FindStringSubmatch(stdout)
	if m == nil {
		t.Fatalf("save printed %q", stdout)
	}
	sum, nsRows := fileTableRows(t, file, "namespaces")
	h := sum.Header
	if m[1] != a.ID() || h.ClusterID != a.ID() || m[3] != file {
		t.Errorf("save names cluster %q and file %q; the file names cluster %q, the server is %q", m[1], m[3], h.ClusterID, a.ID())
	}
	if atoi(t, m[2]) != h.Index || h.Index == 0 || h.Index > a.FSM().Applied() {
		t.Errorf("save names index %s, the file %d, the server applied %d", m[2], h.Index, a.FSM().Applied())
	}
	if atoi(t, m[4]) != sum.Rows || int64(atoi(t, m[5])) != sum.Bytes || m[6] != sum.Checksum {
		t.Errorf("save printed %q; the file holds %d rows, %d bytes, SHA-256 %s", stdout, sum.Rows, sum.Bytes, sum.Checksum)
	}
	if h.Server != a.ID() || h.OrdoVersion == "" || h.Created.IsZero() || h.LastTime == 0 || len(h.Projections) == 0 {
		t.Errorf("header %+v", h)
	}
	if nsRows < len(before) {
		t.Errorf("the file holds %d rows of namespaces, %d namespaces were listed", nsRows, len(before))
	}
	if _, err := os.Stat(file + ".partial"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("save left %s.partial behind: %v", file, err)
	}

	// inspect
	code, stdout, stderr = runCLI("operator", "snapshot", "inspect", file)
	if code != 0 {
		t.Fatalf("inspect: %d %s", code, stderr)
	}
	for _, want := range []string{"Cluster      = " + a.ID() + "\n", "Index        = " + strconv.FormatUint(h.Index, 10) + "\n",
		"Rows         = " + strconv.FormatUint(sum.Rows, 10) + "\n", "SHA-256      = " + sum.Checksum + "\n", "(metadata)", "Projection"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("inspect does not print %q:\n%s", want, stdout)
		}
	}
	if got := tableRows(t, stdout, "namespaces"); got != strconv.Itoa(nsRows) {
		t.Errorf("inspect counts %s rows of namespaces, the file holds %d", got, nsRows)
	}
	code, stdout, stderr = runCLI("operator", "snapshot", "inspect", "-json", file)
	if code != 0 {
		t.Fatalf("inspect -json: %d %s", code, stderr)
	}
	var in struct {
		Header struct {
			ClusterID string
			Index     uint64
		}
		Checksum string
		Rows     uint64
		Events   uint64
		Tables   map[string]struct{ Rows, Bytes uint64 }
		RootKeys []string
	}
	if err := json.Unmarshal([]byte(stdout), &in); err != nil {
		t.Fatalf("inspect -json: %v\n%s", err, stdout)
	}
	// The dev server made its first root key; the file knows its id only.
	keys, err := keyring.List(projections.NewView(a.Store()))
	if err != nil || len(keys) == 0 || len(in.RootKeys) != len(keys) || in.RootKeys[0] != keys[0].KeyID {
		t.Errorf("inspect lists root keys %v, the server %v (%v)", in.RootKeys, keys, err)
	}
	if in.Header.Index != h.Index || in.Header.ClusterID != a.ID() || in.Checksum != sum.Checksum || in.Rows != sum.Rows ||
		in.Events == 0 || in.Tables["namespaces"].Rows != uint64(nsRows) {
		t.Errorf("inspect -json: %s", stdout)
	}

	// Write past the save, then restore.
	applyNamespace(t, addr, "snap-later")
	if !listNamespaces(t, addr)["snap-later"] {
		t.Fatal("snap-later not listed")
	}
	code, stdout, stderr = runCLI("operator", "snapshot", "restore", "-address", addr, file)
	if code != 0 {
		t.Fatalf("restore: %d %s%s", code, stdout, stderr)
	}
	m = restoredLine.FindStringSubmatch(stdout)
	if m == nil {
		t.Fatalf("restore printed %q", stdout)
	}
	restoredAt := atoi(t, m[5])
	if m[1] != a.ID() || atoi(t, m[2]) != h.Index || atoi(t, m[3]) != sum.Rows || m[4] != sum.Checksum {
		t.Errorf("restore printed %q for a file of %d rows saved at %d", stdout, sum.Rows, h.Index)
	}
	if restoredAt <= h.Index || a.FSM().Applied() < restoredAt {
		t.Errorf("the cluster stands at %d after a restore of index %d; the server applied %d", restoredAt, h.Index, a.FSM().Applied())
	}
	if recorded := atoi(t, m[6]); recorded <= restoredAt || a.FSM().Applied() < recorded {
		t.Errorf("the restore at %d is recorded at %d; the server applied %d", restoredAt, recorded, a.FSM().Applied())
	}
	after := listNamespaces(t, addr)
	if after["snap-later"] {
		t.Errorf("snap-later, written after the save, is listed after the restore: %v", after)
	}
	for ns := range before {
		if !after[ns] {
			t.Errorf("saved namespace %s not listed after the restore: %v", ns, after)
		}
	}
	if c := backuptest.RestoreCounts(t, a.Registry()); c["installed"] != 1 || c["invalid"] != 0 {
		t.Errorf("restore counts %v after one restore", c)
	}
	// The cluster goes on writing past the restore.
	applyNamespace(t, addr, "snap-after-restore")
	if !listNamespaces(t, addr)["snap-after-restore"] || a.FSM().Applied() <= restoredAt {
		t.Errorf("a write after the restore: applied %d, restored at %d", a.FSM().Applied(), restoredAt)
	}

	// A damaged file: the CLI checks it and sends nothing.
	good, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	bad := bytes.Clone(good)
	bad[len(bad)/2] ^= 0x10
	damaged := filepath.Join(dir, "damaged.snap")
	if err := os.WriteFile(damaged, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	api := &fakeAPI{status: 200, answer: `{}`}
	fake := api.start(t)
	if code, stdout, stderr := runCLI("operator", "snapshot", "restore", "-address", fake, damaged); code != 1 || stdout != "" ||
		!strings.Contains(stderr, "does not check out") || api.method != "" {
		t.Errorf("restore of a damaged file to a fake server: %d %q %q; the server got %s %s", code, stdout, stderr, api.method, api.uri)
	}
	lastSnap := a.Node().Stats()["last_snapshot_index"]
	if code, stdout, stderr := runCLI("operator", "snapshot", "restore", "-address", addr, damaged); code != 1 || stdout != "" ||
		!strings.Contains(stderr, "does not check out") {
		t.Errorf("restore of a damaged file: %d %q %q", code, stdout, stderr)
	}
	if c := backuptest.RestoreCounts(t, a.Registry()); c["installed"] != 1 || c["invalid"] != 0 || c["failed"] != 0 {
		t.Errorf("restore counts %v: the damaged file reached the server", c)
	}
	if got := a.Node().Stats()["last_snapshot_index"]; got != lastSnap {
		t.Errorf("raft's last snapshot moved from %s to %s", lastSnap, got)
	}
	if now := listNamespaces(t, addr); !now["snap-after-restore"] || now["snap-later"] || len(now) != len(after)+1 {
		t.Errorf("after a refused restore the server lists %v", now)
	}
	if code, _, stderr := runCLI("operator", "snapshot", "inspect", damaged); code != 1 || !strings.Contains(stderr, "damaged.snap") {
		t.Errorf("inspect of a damaged file: %d %q", code, stderr)
	}

	// A save to a missing directory fails, leaving nothing behind.
	missing := filepath.Join(dir, "no-such-dir", "state.snap")
	if code, stdout, stderr := runCLI("operator", "snapshot", "save", "-address", addr, missing); code != 1 || stdout != "" ||
		!strings.Contains(stderr, "no such file or directory") {
		t.Errorf("save to a missing directory: %d %q %q", code, stdout, stderr)
	}
	if _, err := os.Stat(filepath.Dir(missing)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("save created %s: %v", filepath.Dir(missing), err)
	}
	if entries, err := os.ReadDir(dir); err != nil || len(entries) != 2 {
		t.Errorf("the directory holds %v (%v), want the two files written", entries, err)
	}

	// -stale saves the answering server's state.
	staleFile := filepath.Join(dir, "stale.snap")
	if code, stdout, stderr := runCLI("operator", "snapshot", "save", "-stale", "-address", addr, staleFile); code != 0 || !savedLine.MatchString(stdout) {
		t.Fatalf("save -stale: %d %q %q", code, stdout, stderr)
	}
	if sum, _ := fileTableRows(t, staleFile, "namespaces"); sum.Header.Index <= restoredAt {
		t.Errorf("a save after the restore stands at %d, the restore at %d", sum.Header.Index, restoredAt)
	}
}

// TestSnapshotRestoreNeedsAFile: restore and inspect of a missing file, or
// of a file that is no snapshot, fail before anything is sent.
func TestSnapshotRestoreNeedsAFile(t *testing.T) {
	api := &fakeAPI{status: 200, answer: `{}`}
	addr := api.start(t)
	dir := t.TempDir()
	notSnap := filepath.Join(dir, "job.hcl")
	if err := os.WriteFile(notSnap, []byte(`job "web" {}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"operator", "snapshot", "restore", "-address", addr, filepath.Join(dir, "missing.snap")},
		{"operator", "snapshot", "restore", "-address", addr, notSnap},
		{"operator", "snapshot", "restore", "-address", addr},
		{"operator", "snapshot", "inspect", notSnap},
		{"operator", "snapshot", "save", "-address", addr},
	} {
		if code, stdout, stderr := runCLI(args...); code != 1 || stdout != "" || stderr == "" {
			t.Errorf("%q: %d %q %q", args, code, stdout, stderr)
		}
	}
	if api.method != "" {
		t.Errorf("the server got %s %s", api.method, api.uri)
	}
	if code, _, stderr := runCLI("operator", "snapshot", "inspect", notSnap); !strings.Contains(stderr, "not an ordo snapshot file") {
		t.Errorf("inspect of a job file: %d %q", code, stderr)
	}
}
