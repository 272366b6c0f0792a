package state_test

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/ordoplane/ordo/client/driver"
	"github.com/ordoplane/ordo/client/state"
	"github.com/ordoplane/ordo/events"
)

func sample(id string) *state.Alloc {
	yes := true
	return &state.Alloc{
		Alloc: events.Allocation{ID: id, Namespace: "default", JobID: "web", JobVersion: 2, TaskGroup: "web",
			DesiredStatus: events.AllocDesiredRun, DesiredTransition: events.DesiredTransition{NoShutdownDelay: &yes},
			Resources: events.Resources{CPU: 100, MemoryMB: 64}},
		Job: &events.Job{ID: "web", Namespace: "default", Type: "service", Version: 2, TaskGroups: []events.TaskGroup{{
			Name: "web", Count: 1,
			RestartPolicy: &events.RestartPolicy{Attempts: 2, Interval: time.Minute, Delay: time.Second, Mode: "fail"},
			Tasks: []events.Task{{Name: "server", Driver: "mock", Config: events.TaskConfig{"run_for": "1s", "n": int64(3)},
				KillSignal: "SIGINT", KillTimeout: time.Second}},
		}}},
		Tasks: map[string]*state.Task{"server": {
			State: events.TaskState{State: events.TaskStateRunning, Restarts: 1, StartedAt: 1700000000000000000,
				Events: []events.TaskEvent{{Type: events.TaskEventStarted, Time: 1700000000000000000}}},
			Attempt:            1,
			Handle:             &driver.HandleState{Driver: "mock", TaskID: id + "/server/1", Started: time.Unix(1700000000, 0).UTC(), Data: map[string]string{"pid": "42"}},
			RestartWindowStart: time.Unix(1699999990, 0).UTC(),
			RestartWindowCount: 1,
		}},
		DeploymentStatus: &events.AllocDeploymentStatus{Healthy: &yes, Timestamp: 1700000001000000000},
	}
}

// Records survive a reopen of the directory, byte for byte in value.
func TestRoundTrip(t *testing.T) {
	dir := t.TempDir()
	st, err := state.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	id, err := st.NodeID()
	if err != nil || len(id) != 36 {
		t.Fatalf("node id %q, %v", id, err)
	}
	a, b := sample("a1"), sample("b2")
	b.Tasks["server"].Starting, b.Tasks["server"].Handle = true, nil
	for _, rec := range []*state.Alloc{b, a} {
		if err := st.PutAlloc(rec); err != nil {
			t.Fatal(err)
		}
	}
	a.Tasks["server"].State.Restarts = 2 // a rewrite replaces the record
	if err := st.PutAlloc(a); err != nil {
		t.Fatal(err)
	}

	st2, err := state.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if id2, err := st2.NodeID(); err != nil || id2 != id {
		t.Fatalf("node id after reopen %q, %v; want %q", id2, err, id)
	}
	recs, bad, err := st2.Allocs()
	if err != nil || len(bad) != 0 {
		t.Fatalf("allocs: %v %v", bad, err)
	}
	if len(recs) != 2 || !reflect.DeepEqual(recs[0], a) || !reflect.DeepEqual(recs[1], b) {
		t.Fatalf("read back\n%+v\n%+v\nwant\n%+v\n%+v", recs[0], recs[1], a, b)
	}

	if err := st2.DeleteAlloc("a1"); err != nil {
		t.Fatal(err)
	}
	if err := st2.DeleteAlloc("a1"); err != nil {
		t.Fatalf("second delete: %v", err)
	}
	recs, _, _ = st2.Allocs()
	if len(recs) != 1 || recs[0].Alloc.ID != "b2" {
		t.Fatalf("after delete: %d records", len(recs))
	}
	// No temporary files are left behind.
	entries, _ := os.ReadDir(filepath.Join(st2.Dir(), "allocs"))
	if len(entries) != 1 {
		t.Fatalf("files %v", entries)
	}
}

// A record that cannot be decoded is reported, not fatal.
func TestBadRecord(t *testing.T) {
	dir := t.TempDir()
	st, _ := state.Open(dir)
	if err := st.PutAlloc(sample("ok")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(st.Dir(), "allocs", "torn.json"), []byte(`{"Version":1,`), 0o644); err != nil {
		t.Fatal(err)
	}
	recs, bad, err := st.Allocs()
	if err != nil || len(recs) != 1 || bad["torn.json"] == nil {
		t.Fatalf("recs %d, bad %v, err %v", len(recs), bad, err)
	}
	if err := st.PutAlloc(&state.Alloc{Alloc: events.Allocation{ID: "../escape"}}); err == nil {
		t.Fatal("an id with a slash was stored")
	}
}
