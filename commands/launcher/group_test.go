package launcher_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/commandstest"
	lcmd "github.com/ordoplane/ordo/commands/launcher"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/fsm"
	plauncher "github.com/ordoplane/ordo/projections/launcher"
	pt "github.com/ordoplane/ordo/projections/projectionstest"
)

// A launcher runner commits a pass's decisions as one group
// (Pipeline.RunGroup: one entry), each command checked at apply after
// the ones before it. These tests run such groups through the real FSM.

type groupFixture struct {
	t   *testing.T
	fsm *fsm.FSM
	p   *commands.Pipeline
}

func newGroupFixture(t *testing.T) *groupFixture {
	store := pt.OpenStore(t)
	f := pt.NewFSM(t, store)
	p := commandstest.NewPipeline(t, commands.PipelineConfig{Log: &pt.FSMLog{FSM: f}, Store: store, Applied: f.Applied})
	g := &groupFixture{t: t, fsm: f, p: p}
	g.run("provider.apply", lcmd.ApplyProvider{Config: events.ProviderConfig{Name: "cloud", Driver: "sim",
		Pools:  []events.ProviderPool{{Name: "main", Labels: []string{"small"}}},
		Labels: []events.LabelConfig{{Name: "small", InstanceType: "small"}},
		Sim:    &events.SimConfig{InstanceTypes: map[string]events.SimInstanceType{"small": {Cores: 2, RAMMB: 2048}}}}})
	return g
}

func (g *groupFixture) run(name string, c commands.Command) {
	g.t.Helper()
	if _, err := g.p.Run(context.Background(), name, commands.Request{Actor: "test"}, c); err != nil {
		g.t.Fatalf("%s: %v", name, err)
	}
}

func (g *groupFixture) request(tenant string) *plauncher.Request {
	g.t.Helper()
	c := &lcmd.CreateRequest{Labels: []string{"small"}, Requestor: "ci", Tenant: tenant}
	g.run("node-request.create", c)
	return g.get(c.ID())
}

func (g *groupFixture) view() projections.View {
	snap := g.fsm.Store().Snapshot()
	g.t.Cleanup(func() { snap.Close() })
	return projections.NewView(snap)
}

func (g *groupFixture) get(id string) *plauncher.Request {
	g.t.Helper()
	r, err := plauncher.GetRequest(g.view(), id)
	if err != nil {
		g.t.Fatalf("request %s: %v", id, err)
	}
	return r
}

// accept is the Accept a runner decides for r: assign the ready
// instances named, or launch one small instance.
func accept(r *plauncher.Request, assign ...*plauncher.Instance) commands.Grouped {
	a := &lcmd.Accept{Provider: "cloud", ConfigIndex: 1, Pool: "main", RequestID: r.ID, RequestModifyIndex: r.ModifyIndex}
	for _, in := range assign {
		a.Assign = append(a.Assign, lcmd.Assignment{InstanceID: in.ID, ModifyIndex: in.ModifyIndex})
	}
	if len(assign) == 0 {
		a.Launch = []events.Instance{{Label: "small", InstanceType: "small", Cores: 2, RAMMB: 2048}}
	}
	return commands.Grouped{Name: "node-request.accept", Req: commands.Request{Actor: "system:launcher"}, Cmd: a}
}

// wantOneEntry fails unless every outcome is at one index.
func wantOneEntry(t *testing.T, outs []commands.Outcome) {
	t.Helper()
	for i, o := range outs {
		if o.Index == 0 || o.Index != outs[0].Index {
			t.Fatalf("outcome %d at index %d, outcome 0 at %d: want the group in one entry", i, o.Index, outs[0].Index)
		}
	}
}

// P13, P19: a group of launches for a tenant that passes its limit by
// one has exactly the overshooting launch refused: each launch's
// TenantFits is checked at apply after the launches before it in the
// group, building instances counted. The others apply.
func TestGroupedLaunchesHoldTenantLimit(t *testing.T) {
	g := newGroupFixture(t)
	g.run("tenant.apply", lcmd.ApplyTenant{Tenant: events.Tenant{Name: "team", MaxServers: 3}})
	var group []commands.Grouped
	var reqs []*plauncher.Request
	for range 4 {
		r := g.request("team")
		reqs = append(reqs, r)
		group = append(group, accept(r))
	}
	outs, errs := g.p.RunGroup(context.Background(), group)
	wantOneEntry(t, outs)
	for i, err := range errs[:3] {
		if err != nil {
			t.Fatalf("launch %d: %v; want it applied (the limit holds 3)", i, err)
		}
	}
	var ce *commands.ConflictError
	if !errors.As(errs[3], &ce) || !strings.Contains(ce.Reason, "max-servers") {
		t.Fatalf("launch 3: %v; want a conflict naming the tenant's max-servers", errs[3])
	}
	insts, err := plauncher.TenantInstances(g.view(), "team")
	if err != nil {
		t.Fatal(err)
	}
	if len(insts) != 3 {
		t.Fatalf("tenant has %d instances; want 3", len(insts))
	}
	for i, r := range reqs {
		want := events.RequestPending
		if i == 3 {
			want = events.RequestRequested
		}
		if st := g.get(r.ID).State; st != want {
			t.Fatalf("request %d is %s; want %s", i, st, want)
		}
	}
}

// P4: two accepts in one group handed the same ready instance: the
// first takes it, the second is refused (the instance changed since it
// was read), and a third accept in the group applies regardless.
func TestGroupedAssignTakesAReadyInstanceOnce(t *testing.T) {
	g := newGroupFixture(t)
	g.run("instance.register-host", lcmd.RegisterHost{Provider: "cloud", ConfigIndex: 1, Pool: "main",
		Host: events.StaticHost{Name: "h1", Address: "10.0.0.1", Labels: []string{"small"}}})
	insts, err := plauncher.ProviderInstances(g.view(), "cloud")
	if err != nil || len(insts) != 1 || insts[0].State != events.InstanceReady {
		t.Fatalf("instances %+v (%v): want one ready", insts, err)
	}
	a, b, c := g.request(""), g.request(""), g.request("")
	outs, errs := g.p.RunGroup(context.Background(), []commands.Grouped{accept(a, insts[0]), accept(b, insts[0]), accept(c)})
	wantOneEntry(t, outs)
	var ce *commands.ConflictError
	if errs[0] != nil || !errors.As(errs[1], &ce) || errs[2] != nil {
		t.Fatalf("errors %v: want the second accept alone refused", errs)
	}
	if st := g.get(a.ID).State; st != events.RequestFulfilled {
		t.Fatalf("a is %s; want fulfilled with the ready instance", st)
	}
	if st := g.get(b.ID).State; st != events.RequestRequested {
		t.Fatalf("b is %s; want requested (decided again next pass)", st)
	}
	if r := g.get(c.ID); r.State != events.RequestPending || len(r.Instances) != 1 {
		t.Fatalf("c is %s with %v; want pending with its launch", r.State, r.Instances)
	}
}
