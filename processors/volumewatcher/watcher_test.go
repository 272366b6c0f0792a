package volumewatcher_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/ordoplane/ordo/clock/clocktest"
	"github.com/ordoplane/ordo/commands/csi/csitest"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/processors/volumewatcher"
	"github.com/ordoplane/ordo/projections/csi"
	"github.com/ordoplane/ordo/projections/nodes"
)

// recorder is a Detacher that records the calls and fails the first
// failures of them.
type recorder struct {
	mu       sync.Mutex
	calls    []string
	modes    []string
	failures int
}

func (r *recorder) call(what string, c events.CSIVolumeClaim) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, what+":"+c.AllocID)
	r.modes = append(r.modes, c.AccessMode)
	if r.failures > 0 {
		r.failures--
		return errors.New("plugin unavailable")
	}
	return nil
}

func (r *recorder) NodeDetach(_ context.Context, _ *nodes.Node, _ *csi.Volume, c events.CSIVolumeClaim) error {
	return r.call("node", c)
}

func (r *recorder) ControllerDetach(_ context.Context, _ *csi.Plugin, _ *csi.Volume, c events.CSIVolumeClaim) error {
	return r.call("controller", c)
}

func (r *recorder) snapshot() ([]string, []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.calls...), append([]string(nil), r.modes...)
}

// publishingNode is a plugin node with a client API whose controller
// publishes volumes: releasing a claim on it takes both calls.
func publishingNode(id string) *events.NodeRegistered {
	n := csitest.PluginNode(id, "p-"+id, nil)
	n.Node.HTTPAddr = "127.0.0.1:1"
	n.Node.CSIControllerPlugins["hostpath"].ControllerInfo.Capabilities = []string{"CREATE_DELETE_VOLUME", volumewatcher.ControllerCapability}
	return n
}

func newWatcher(t *testing.T, h *csitest.Harness, d volumewatcher.Detacher, clock *clocktest.Clock) *volumewatcher.Watcher {
	t.Helper()
	w, err := volumewatcher.New(volumewatcher.Config{Pipeline: h.Pipeline, State: h.FSM, Detacher: d, Clock: clock,
		RetryMin: time.Second, RetryMax: 4 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func claims(t *testing.T, h *csitest.Harness, id string) []events.CSIVolumeClaim {
	t.Helper()
	v, err := csi.GetVolume(h.View(), "default", id)
	if err != nil {
		t.Fatal(err)
	}
	return v.Claims
}

// TestReleaseGCdClaim (N22): the claim of a garbage-collected allocation
// is released by the watcher through node unpublish, controller unpublish
// and free, with the access mode the claim was made in even though the
// volume's changed since; a failed call is retried after a backoff on the
// clock, not at once.
func TestReleaseGCdClaim(t *testing.T) {
	h := csitest.New(t)
	h.Apply(publishingNode("n1"))
	h.Apply(csitest.Volume("db", events.CSIAccessSingleNodeWriter), csitest.DBJob("app", "db", events.CSIAccessSingleNodeWriter, false, 1))
	h.Apply(&events.AllocsPlaced{EvalID: "e", Allocs: []events.Allocation{csitest.Alloc("a1", "app", "n1", 0)}})
	h.Apply(csitest.Volume("db", events.CSIAccessMultiNodeMultiW)) // the volume's mode changes (a forced re-register)
	h.Apply(&events.AllocsDeleted{IDs: []string{"a1"}})

	rec := &recorder{failures: 1}
	clock := clocktest.NewClock(time.Unix(1_700_000_000, 0))
	w := newWatcher(t, h, rec, clock)
	ctx := context.Background()
	wait, err := w.Pass(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if wait != time.Second || len(claims(t, h, "db")) != 1 || claims(t, h, "db")[0].State != events.CSIClaimUnpublishing {
		t.Fatalf("after a failed node call: wait %v, claims %+v", wait, claims(t, h, "db"))
	}
	if _, err := w.Pass(ctx); err != nil { // not due yet: no call
		t.Fatal(err)
	}
	if calls, _ := rec.snapshot(); len(calls) != 1 {
		t.Fatalf("retried before the backoff: %v", calls)
	}
	clock.Advance(time.Second)
	if _, err := w.Pass(ctx); err != nil {
		t.Fatal(err)
	}
	calls, modes := rec.snapshot()
	if want := []string{"node:a1", "node:a1", "controller:a1"}; len(calls) != 3 || calls[1] != want[1] || calls[2] != want[2] {
		t.Fatalf("calls %v, want %v", calls, want)
	}
	for _, m := range modes {
		if m != events.CSIAccessSingleNodeWriter {
			t.Fatalf("a call used mode %q, not the claim's %q", m, events.CSIAccessSingleNodeWriter)
		}
	}
	if c := claims(t, h, "db"); len(c) != 0 {
		t.Fatalf("claims after release: %+v", c)
	}
}

// TestReleaseWithoutCalls: a claim on a node that is gone, of a plugin
// that publishes through no controller, is freed without a call; live
// claims are left alone.
func TestReleaseWithoutCalls(t *testing.T) {
	h := csitest.New(t)
	h.Apply(csitest.PluginNode("n1", "p1", nil), csitest.PluginNode("n2", "p2", nil))
	h.Apply(csitest.Volume("db", events.CSIAccessMultiNodeMultiW), csitest.DBJob("app", "db", events.CSIAccessMultiNodeMultiW, false, 2))
	h.Apply(&events.AllocsPlaced{EvalID: "e", Allocs: []events.Allocation{csitest.Alloc("a1", "app", "n1", 0), csitest.Alloc("a2", "app", "n2", 1)}})
	h.Apply(&events.AllocsClientUpdated{NodeID: "n1", Updates: []events.AllocClientUpdate{{ID: "a1", ClientStatus: events.AllocClientFailed}}},
		&events.NodeDeregistered{ID: "n1"})
	rec := &recorder{}
	w := newWatcher(t, h, rec, clocktest.NewClock(time.Unix(1_700_000_000, 0)))
	if _, err := w.Pass(context.Background()); err != nil {
		t.Fatal(err)
	}
	if calls, _ := rec.snapshot(); len(calls) != 0 {
		t.Fatalf("calls %v", calls)
	}
	if c := claims(t, h, "db"); len(c) != 1 || c[0].AllocID != "a2" || c[0].State != events.CSIClaimTaken {
		t.Fatalf("claims %+v, want a2's live claim only", c)
	}
}

// TestRunWakesOnClaims: the running watcher releases a claim as soon as
// its allocation stops, and stops with its context.
func TestRunWakesOnClaims(t *testing.T) {
	h := csitest.New(t)
	h.Apply(csitest.PluginNode("n1", "p1", nil))
	h.Apply(csitest.Volume("db", events.CSIAccessSingleNodeWriter), csitest.DBJob("app", "db", events.CSIAccessSingleNodeWriter, false, 1))
	h.Apply(&events.AllocsPlaced{EvalID: "e", Allocs: []events.Allocation{csitest.Alloc("a1", "app", "n1", 0)}})
	w := newWatcher(t, h, &recorder{}, clocktest.NewClock(time.Unix(1_700_000_000, 0)))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	changed := h.FSM.Notifier().Table(csi.VolumesTable)
	h.Apply(&events.AllocsClientUpdated{NodeID: "n1", Updates: []events.AllocClientUpdate{{ID: "a1", ClientStatus: events.AllocClientComplete}}})
	deadline := time.After(10 * time.Second)
	for len(claims(t, h, "db")) != 0 {
		select {
		case <-changed:
			changed = h.FSM.Notifier().Table(csi.VolumesTable)
		case <-deadline:
			t.Fatalf("claim never released: %+v", claims(t, h, "db"))
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestDecide(t *testing.T) {
	up := &nodes.Node{ID: "n1", Status: events.NodeStatusReady, HTTPAddr: "x:1"}
	down := &nodes.Node{ID: "n1", Status: events.NodeStatusDown, HTTPAddr: "x:1"}
	pub := &csi.Plugin{Controllers: map[string]*events.CSIInfo{"n9": {Healthy: true,
		ControllerInfo: &events.CSIControllerInfo{Capabilities: []string{volumewatcher.ControllerCapability}}}},
		Nodes: map[string]*events.CSIInfo{"n1": {Healthy: true}}}
	gone := &csi.Plugin{Controllers: pub.Controllers}
	for _, tc := range []struct {
		state string
		p     *csi.Plugin
		n     *nodes.Node
		call  volumewatcher.Call
		next  string
		ok    bool
	}{
		{events.CSIClaimTaken, pub, up, 0, "", false},
		{events.CSIClaimUnpublishing, pub, up, volumewatcher.CallNodeDetach, events.CSIClaimNodeDetached, true},
		{events.CSIClaimUnpublishing, pub, down, volumewatcher.CallNone, events.CSIClaimNodeDetached, true},
		{events.CSIClaimUnpublishing, pub, nil, volumewatcher.CallNone, events.CSIClaimNodeDetached, true},
		{events.CSIClaimUnpublishing, gone, up, volumewatcher.CallNone, events.CSIClaimNodeDetached, true},
		{events.CSIClaimNodeDetached, pub, up, volumewatcher.CallControllerDetach, events.CSIClaimControllerDetached, true},
		{events.CSIClaimNodeDetached, &csi.Plugin{}, up, volumewatcher.CallNone, events.CSIClaimControllerDetached, true},
		{events.CSIClaimNodeDetached, nil, up, volumewatcher.CallNone, events.CSIClaimControllerDetached, true},
		{events.CSIClaimControllerDetached, pub, up, volumewatcher.CallNone, events.CSIClaimFreed, true},
	} {
		s, ok := volumewatcher.Decide(events.CSIVolumeClaim{AllocID: "a", State: tc.state}, tc.p, tc.n)
		if ok != tc.ok || (ok && (s.Call != tc.call || s.Next.State != tc.next)) {
			t.Errorf("%s: %+v %v, want %v → %s", tc.state, s, ok, tc.call, tc.next)
		}
	}
}
