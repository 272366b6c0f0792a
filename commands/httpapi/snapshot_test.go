package httpapi_test

import (
	"bytes"
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ordoplane/ordo/storage/snapshots"
)

// The snapshot endpoints on one dev agent: a save streams the current
// state at the applied index it names; a save or an export asked for a
// past state is refused with 400 naming the parameter (it used to be cut
// short mid-stream); a restore of anything but a whole snapshot file is
// refused with 400 naming "snapshot" and appends nothing; a restore of
// the saved file brings the saved state back and records it.
func TestSnapshotEndpoints(t *testing.T) {
	d := startAgent(t)
	d.putNamespace(t, "kept", "saved")
	r := d.do(t, http.MethodGet, "/v1/operator/snapshot", nil)
	if r.status != http.StatusOK {
		t.Fatalf("save: %d %s", r.status, r.body)
	}
	sum, err := snapshots.Verify(bytes.NewReader(r.body), nil)
	if err != nil {
		t.Fatalf("the saved file does not check out: %v", err)
	}
	if idx := r.index(t); sum.Header.Index != idx || idx != d.FSM().Applied() {
		t.Fatalf("saved at %d, X-Nomad-Index %d, applied %d", sum.Header.Index, idx, d.FSM().Applied())
	}

	for _, path := range []string{"/v1/operator/snapshot?at_index=2", "/v1/operator/log/export?at_index=2"} {
		res := d.do(t, http.MethodGet, path, nil)
		if e := res.apiError(t); res.status != http.StatusBadRequest || e.Field != "at_index" {
			t.Fatalf("GET %s: %s", path, res.body)
		}
	}

	lostAt := d.putNamespace(t, "lost", "after the save")
	// Time travel serves the state at that index from the versions store...
	if names := namespacesAt(t, d, lostAt); !names["lost"] {
		t.Fatalf("at_index=%d before the restore: %v", lostAt, names)
	}
	before := d.archiveLen(t)
	cut := r.body[:len(r.body)-10]
	for name, body := range map[string][]byte{"empty": nil, "not a snapshot": []byte("hello"), "truncated": cut} {
		res := d.do(t, http.MethodPut, "/v1/operator/snapshot", bytes.NewReader(body))
		if e := res.apiError(t); res.status != http.StatusBadRequest || e.Field != "snapshot" {
			t.Fatalf("restore of %s: %s", name, res.body)
		}
	}
	if after := d.archiveLen(t); after != before {
		t.Fatalf("refused restores moved the archive from %d to %d events", before, after)
	}

	res := d.do(t, http.MethodPut, "/v1/operator/snapshot", bytes.NewReader(r.body), "Idempotency-Key", "restore-1")
	if res.status != http.StatusOK {
		t.Fatalf("restore: %d %s", res.status, res.body)
	}
	var out struct{ Index, SnapshotIndex, RecordedAt uint64 }
	res.decode(t, &out)
	if out.SnapshotIndex != sum.Header.Index || out.RecordedAt <= out.Index {
		t.Fatalf("restore answered %s", res.body)
	}
	d.waitApplied(t, out.RecordedAt)
	// The restore replaced every version: past reads wait for the
	// versions store to be filled again from the restored history.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := d.TimeTravel().WaitBackfilled(ctx); err != nil {
		t.Fatalf("versions backfill after the restore: %v", err)
	}
	// ...which, after the restore, is the replaced history: the state at
	// that index is now the saved one.
	if names := namespacesAt(t, d, lostAt); names["lost"] || !names["kept"] {
		t.Fatalf("at_index=%d after the restore: %v, want the saved state", lostAt, names)
	}
	if names := namespacesAt(t, d, out.RecordedAt); names["lost"] || !names["kept"] {
		t.Fatalf("at_index=%d after the restore: %v", out.RecordedAt, names)
	}
	if got := d.do(t, http.MethodGet, "/v1/namespace/lost", nil); got.status != http.StatusNotFound {
		t.Fatalf("a namespace written after the save survived the restore: %d", got.status)
	}
	if got := d.do(t, http.MethodGet, "/v1/namespace/kept", nil); got.status != http.StatusOK {
		t.Fatalf("a saved namespace is gone after the restore: %d", got.status)
	}
	// A retry with the same key answers the first restore's outcome and
	// installs nothing over what was written since; a key another command
	// used is a conflict.
	d.putNamespace(t, "between", "after the restore")
	retry := d.do(t, http.MethodPut, "/v1/operator/snapshot", bytes.NewReader(r.body), "Idempotency-Key", "restore-1")
	var again struct {
		Index, RecordedAt uint64
		Duplicate         bool
	}
	retry.decode(t, &again)
	if retry.status != http.StatusOK || !again.Duplicate || again.Index != out.Index || again.RecordedAt != out.RecordedAt {
		t.Fatalf("a retried restore answered %d %s, the first %s", retry.status, retry.body, res.body)
	}
	if got := d.do(t, http.MethodGet, "/v1/namespace/between", nil); got.status != http.StatusOK {
		t.Fatalf("a retried restore installed the file again: %d", got.status)
	}
	nsKey := d.do(t, http.MethodPut, "/v1/namespace/keyed", strings.NewReader(`{"Name":"keyed"}`), "Idempotency-Key", "ns-1")
	if nsKey.status != http.StatusOK {
		t.Fatalf("PUT namespace: %d %s", nsKey.status, nsKey.body)
	}
	if c := d.do(t, http.MethodPut, "/v1/operator/snapshot", bytes.NewReader(r.body), "Idempotency-Key", "ns-1"); c.status != http.StatusConflict {
		t.Fatalf("a restore with a key another command used: %d %s", c.status, c.body)
	}

	hist := d.do(t, http.MethodGet, "/v1/history/server/"+d.ID(), nil)
	if !bytes.Contains(hist.body, []byte("SnapshotRestored")) || !bytes.Contains(hist.body, []byte("installed at index "+strconv.FormatUint(out.Index, 10))) {
		t.Fatalf("the server's history does not show the restore: %s", hist.body)
	}
}

// namespacesAt lists the namespaces at index through time travel.
func namespacesAt(t *testing.T, d *devAgent, index uint64) map[string]bool {
	t.Helper()
	r := d.do(t, http.MethodGet, "/v1/namespaces?at_index="+strconv.FormatUint(index, 10), nil)
	if r.status != http.StatusOK {
		t.Fatalf("namespaces at %d: %d %s", index, r.status, r.body)
	}
	var list []struct{ Name string }
	r.decode(t, &list)
	out := map[string]bool{}
	for _, ns := range list {
		out[ns.Name] = true
	}
	return out
}
