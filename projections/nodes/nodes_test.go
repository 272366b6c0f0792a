package nodes_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/nodes"
	pt "github.com/ordoplane/ordo/projections/projectionstest"
	"github.com/ordoplane/ordo/projections/rebuild"
)

func registered(id, status string) *events.NodeRegistered {
	return &events.NodeRegistered{Node: events.Node{ID: id, Name: "n-" + id, Datacenter: "dc1", NodePool: "default",
		Resources: events.NodeResources{CPU: 4000, MemoryMB: 8192, DiskMB: 1000}, HTTPAddr: "10.0.0.1:4646", Status: status}}
}

func get(t *testing.T, v projections.View, id string) *nodes.Node {
	t.Helper()
	n, err := nodes.Get(v, id)
	if err != nil {
		t.Fatalf("Get(%s): %v", id, err)
	}
	return n
}

func TestProjection(t *testing.T) {
	store := pt.OpenStore(t)
	f := pt.NewFSM(t, store)
	v := projections.NewView(store)
	leaderSecs := pt.LeaderTime / int64(time.Second)

	pt.ApplyOne(t, f, 1, pt.Entry(t, "c1", registered("a1", ""), registered("b2", events.NodeStatusReady)))
	a := get(t, v, "a1")
	want := &nodes.Node{ID: "a1", Name: "n-a1", Datacenter: "dc1", NodePool: "default", HTTPAddr: "10.0.0.1:4646",
		Resources: events.NodeResources{CPU: 4000, MemoryMB: 8192, DiskMB: 1000},
		Status:    events.NodeStatusInitializing, StatusDescription: "registered", StatusUpdatedAt: leaderSecs,
		SchedulingEligibility: events.NodeEligible, CreateIndex: 1, ModifyIndex: 1}
	if !reflect.DeepEqual(a, want) {
		t.Fatalf("registered node =\n %+v\nwant\n %+v", a, want)
	}
	if b := get(t, v, "b2"); b.Status != events.NodeStatusReady || !b.Ready() {
		t.Fatalf("b2 = %+v, want ready", b)
	}

	// A missed heartbeat records its index; re-registering keeps the status (N1).
	pt.ApplyOne(t, f, 2, pt.Entry(t, "c2", &events.NodeStatusUpdated{ID: "b2", Status: events.NodeStatusDisconnected, MissedHeartbeat: true}))
	rereg := registered("b2", events.NodeStatusReady)
	rereg.Node.Name, rereg.Node.Resources.CPU = "renamed", 8000
	pt.ApplyOne(t, f, 3, pt.Entry(t, "c3", rereg))
	b := get(t, v, "b2")
	if b.Status != events.NodeStatusDisconnected || b.LastMissedHeartbeatIndex != 2 || b.Name != "renamed" ||
		b.Resources.CPU != 8000 || b.CreateIndex != 1 || b.ModifyIndex != 3 {
		t.Fatalf("re-registered b2 = %+v", b)
	}
	pt.ApplyOne(t, f, 4, pt.Entry(t, "c4", &events.NodeAllocsUpdated{ID: "b2"}))
	if b := get(t, v, "b2"); b.LastAllocUpdateIndex != 4 || b.LastMissedHeartbeatIndex != 2 {
		t.Fatalf("after alloc update b2 = %+v", b)
	}
	pt.ApplyOne(t, f, 5, pt.Entry(t, "c5", &events.NodeStatusUpdated{ID: "b2", Status: events.NodeStatusReady}))
	if b := get(t, v, "b2"); b.Status != events.NodeStatusReady || b.LastMissedHeartbeatIndex != 0 || b.LastAllocUpdateIndex != 4 {
		t.Fatalf("ready b2 = %+v", b)
	}

	// Drain makes a node ineligible; stopping it with MarkEligible undoes that.
	ds := &events.DrainStrategy{Deadline: int64(time.Hour), ForceDeadline: pt.LeaderTime + int64(time.Hour), StartedAt: pt.LeaderTime}
	pt.ApplyOne(t, f, 6, pt.Entry(t, "c6", &events.NodeDrainUpdated{ID: "a1", DrainStrategy: ds}))
	a = get(t, v, "a1")
	if !a.Drain || a.SchedulingEligibility != events.NodeIneligible || a.DrainStrategy == nil || a.DrainStrategy.Deadline != int64(time.Hour) {
		t.Fatalf("draining a1 = %+v", a)
	}
	pt.ApplyOne(t, f, 7, pt.Entry(t, "c7", &events.NodeDrainUpdated{ID: "a1"}))
	if a := get(t, v, "a1"); a.Drain || a.DrainStrategy != nil || a.SchedulingEligibility != events.NodeIneligible {
		t.Fatalf("drain stopped without MarkEligible: a1 = %+v", a)
	}
	pt.ApplyOne(t, f, 8, pt.Entry(t, "c8", &events.NodeEligibilityUpdated{ID: "a1", Eligibility: events.NodeEligible}))
	if a := get(t, v, "a1"); a.SchedulingEligibility != events.NodeEligible {
		t.Fatalf("eligible a1 = %+v", a)
	}
	pt.ApplyOne(t, f, 9, pt.Entry(t, "c9", &events.NodeDrainUpdated{ID: "a1", DrainStrategy: ds}, &events.NodeDrainUpdated{ID: "a1", MarkEligible: true}))
	if a := get(t, v, "a1"); a.Drain || a.SchedulingEligibility != events.NodeEligible {
		t.Fatalf("drain stopped with MarkEligible: a1 = %+v", a)
	}

	// Events about a node that is gone change nothing.
	before := pt.TableIndex(t, store, nodes.Table)
	pt.ApplyOne(t, f, 10, pt.Entry(t, "c10", &events.NodeStatusUpdated{ID: "zz", Status: events.NodeStatusDown}))
	if _, err := nodes.Get(v, "zz"); !errors.Is(err, projections.ErrNotFound) {
		t.Fatalf("status of a missing node created it: %v", err)
	}
	if pt.TableIndex(t, store, nodes.Table) != before {
		t.Fatal("an event about a missing node moved the table index")
	}
	pt.ApplyOne(t, f, 11, pt.Entry(t, "c11", &events.NodeDeregistered{ID: "a1"}))
	if _, err := nodes.Get(v, "a1"); !errors.Is(err, projections.ErrNotFound) {
		t.Fatalf("Get after deregister: %v", err)
	}

	// Rebuilding from the archive gives the same table.
	dst := pt.OpenStore(t)
	projs := []projections.Projection{nodes.Projection{}}
	if _, err := rebuild.Rebuild(store, dst, projs, 0, nil); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(pt.Checksums(t, dst, projs), pt.Checksums(t, store, projs)) {
		t.Fatal("rebuilt nodes projection differs")
	}
}

func TestResolveAndList(t *testing.T) {
	store := pt.OpenStore(t)
	f := pt.NewFSM(t, store)
	v := projections.NewView(store)
	pt.ApplyOne(t, f, 1, pt.Entry(t, "c1", registered("abc1", ""), registered("abc2", ""), registered("abd", ""), registered("b", "")))
	for _, tc := range []struct {
		in, want string
		err      string
	}{
		{"abc1", "abc1", ""},
		{"abd", "abd", ""},
		{"abd0", "", "not found"},
		{"b", "b", ""},
		{"abc", "", "matches several"},
		{"x", "", "not found"},
		{"", "", "not found"},
	} {
		n, err := nodes.Resolve(v, tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Resolve(%q) = %v, %v; want error %q", tc.in, n, err, tc.err)
			}
			continue
		}
		if err != nil || n.ID != tc.want {
			t.Errorf("Resolve(%q) = %v, %v; want %s", tc.in, n, err, tc.want)
		}
	}
	var amb *projections.AmbiguousError
	if _, err := nodes.Resolve(v, "ab"); !errors.As(err, &amb) || !reflect.DeepEqual(amb.Matches, []string{"abc1", "abc2", "abd"}) {
		t.Fatalf("Resolve(ab) = %v", err)
	}
	list, err := nodes.List(v, "abc")
	if err != nil || len(list) != 2 || list[0].ID != "abc1" || list[1].ID != "abc2" {
		t.Fatalf("List(abc) = %v, %v", list, err)
	}
	if s := list[0].Stub(); s.Address != "10.0.0.1" || s.ID != "abc1" || s.Status != events.NodeStatusInitializing || s.CreateIndex != 1 {
		t.Fatalf("Stub = %+v", s)
	}
}

// TestDrainStrategyJSON checks the Nomad shape: Deadline in nanoseconds,
// times as RFC 3339, zero times for none.
func TestDrainStrategyJSON(t *testing.T) {
	ds := nodes.DrainStrategy{Deadline: int64(time.Hour), IgnoreSystemJobs: true, StartedAt: pt.LeaderTime}
	b, err := json.Marshal(ds)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"Deadline":3600000000000,"IgnoreSystemJobs":true,"ForceDeadline":"0001-01-01T00:00:00Z","StartedAt":"2023-11-14T22:13:20Z"}`
	if string(b) != want {
		t.Fatalf("JSON = %s\nwant   %s", b, want)
	}
	var back nodes.DrainStrategy
	if err := json.Unmarshal(b, &back); err != nil || back != ds {
		t.Fatalf("round trip = %+v, %v", back, err)
	}
}

func TestMetadata(t *testing.T) {
	p := nodes.Projection{}
	if p.Name() != "nodes" || p.Version() < 1 || !reflect.DeepEqual(p.Tables(), []string{nodes.Table, nodes.AllocUpdatesTable}) {
		t.Fatalf("%s v%d tables %v", p.Name(), p.Version(), p.Tables())
	}
}
