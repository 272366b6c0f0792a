package launcher

import (
	"context"
	"slices"
	"testing"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/commandstest"
	lcmd "github.com/ordoplane/ordo/commands/launcher"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/launcher"
	pt "github.com/ordoplane/ordo/projections/projectionstest"
)

// The runner's view holds its provider's instances as the projection
// does after every sync, though it re-reads only those the new events
// name: launched, assigned, ready, in use, released, deleted; another
// provider's never.
func TestOpenViewInstancesFollowTheProjection(t *testing.T) {
	store := pt.OpenStore(t)
	f := pt.NewFSM(t, store)
	p := commandstest.NewPipeline(t, commands.PipelineConfig{Log: &pt.FSMLog{FSM: f}, Store: store, Applied: f.Applied})
	run := func(name string, c commands.Command) {
		t.Helper()
		if _, err := p.Run(context.Background(), name, commands.Request{Actor: "test"}, c); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	for _, name := range []string{"a", "b"} {
		run("provider.apply", lcmd.ApplyProvider{Config: events.ProviderConfig{Name: name, Driver: "sim",
			Pools: []events.ProviderPool{{Name: "main", Labels: []string{"small"}}}, Labels: []events.LabelConfig{{Name: "small", InstanceType: "s"}},
			Sim: &events.SimConfig{InstanceTypes: map[string]events.SimInstanceType{"s": {Cores: 1}}}}})
	}
	o := newOpenView("a")
	check := func(when string) {
		t.Helper()
		snap := store.Snapshot()
		defer snap.Close()
		v := projections.NewView(snap)
		if _, err := o.sync(snap, v); err != nil {
			t.Fatal(err)
		}
		want, err := launcher.ProviderInstances(v, "a")
		if err != nil {
			t.Fatal(err)
		}
		got := o.instances()
		same := slices.EqualFunc(got, want, func(x, y *launcher.Instance) bool {
			return x.ID == y.ID && x.State == y.State && x.RequestID == y.RequestID && x.ModifyIndex == y.ModifyIndex
		})
		if !same {
			t.Fatalf("%s: view holds %v; the projection %v", when, ids(got), ids(want))
		}
	}
	check("loaded")
	request := func() string {
		c := &lcmd.CreateRequest{Labels: []string{"small"}, Requestor: "ci"}
		run("node-request.create", c)
		return c.ID()
	}
	accept := func(prov, req string) string {
		snap := store.Snapshot()
		r, err := launcher.GetRequest(projections.NewView(snap), req)
		snap.Close()
		if err != nil {
			t.Fatal(err)
		}
		a := &lcmd.Accept{Provider: prov, ConfigIndex: 1, Pool: "main", RequestID: req, RequestModifyIndex: r.ModifyIndex,
			Launch: []events.Instance{{Label: "small"}}}
		run("node-request.accept", a)
		return a.Launched()[0]
	}
	r1, r2, r3 := request(), request(), request()
	i1, i2 := accept("a", r1), accept("a", r2)
	accept("b", r3)
	check("launched on a and b")
	run("instance.ready", lcmd.SetInstanceState{ID: i1, State: events.InstanceReady, ExternalID: "x1"})
	check("one ready (its request fulfilled, the instance in use)")
	run("node-request.delete", lcmd.DeleteRequest{ID: r1})
	check("its request deleted (the instance used)")
	run("instance.remove", lcmd.RemoveInstance{ID: i1})
	run("instance.failed", lcmd.SetInstanceState{ID: i2, State: events.InstanceFailed, Reason: "boom"})
	check("one deleted, one failed")
	run("instance.register-host", lcmd.RegisterHost{Provider: "a", ConfigIndex: 1, Pool: "main",
		Host: events.StaticHost{Name: "h1", Address: "10.0.0.1", Labels: []string{"small"}}})
	check("a host registered ready")
}

func ids(insts []*launcher.Instance) []string {
	var out []string
	for _, in := range insts {
		out = append(out, in.ID+":"+in.State)
	}
	return out
}
