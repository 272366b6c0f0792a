package launcher_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ordoplane/ordo/clock/clocktest"
	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/commandstest"
	lcmd "github.com/ordoplane/ordo/commands/launcher"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/processors/launcher"
	"github.com/ordoplane/ordo/processors/launcher/driver"
	"github.com/ordoplane/ordo/processors/launcher/driver/sim"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/fsm"
	plauncher "github.com/ordoplane/ordo/projections/launcher"
	pt "github.com/ordoplane/ordo/projections/projectionstest"
)

type fixture struct {
	t      *testing.T
	fsm    *fsm.FSM
	p      *commands.Pipeline
	clock  *clocktest.Clock
	mu     sync.Mutex
	clouds map[string]*sim.Cloud
	faults map[string]sim.Faults
	// drivers are factories start adds to sim's.
	drivers map[string]launcher.Factory
	l       *launcher.Launcher
	// reg holds the launcher's metrics.
	reg *prometheus.Registry
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	store := pt.OpenStore(t)
	fsm := pt.NewFSM(t, store)
	clock := clocktest.NewClock(time.Unix(1_700_000_000, 0))
	p := commandstest.NewPipeline(t, commands.PipelineConfig{Log: &pt.FSMLog{FSM: fsm}, Store: store, Applied: fsm.Applied,
		Clock: clock, Logger: quiet()})
	return &fixture{t: t, fsm: fsm, p: p, clock: clock, clouds: map[string]*sim.Cloud{}, faults: map[string]sim.Faults{},
		reg: prometheus.NewRegistry()}
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// start runs the launcher until the test ends.
func (f *fixture) start() {
	f.t.Helper()
	drivers := map[string]launcher.Factory{"sim": func(cfg events.ProviderConfig) (driver.Driver, error) {
		f.mu.Lock()
		defer f.mu.Unlock()
		c := sim.New(*cfg.Sim, f.faults[cfg.Name])
		f.clouds[cfg.Name] = c
		return c, nil
	}}
	for name, d := range f.drivers {
		drivers[name] = d
	}
	l, err := launcher.New(launcher.Config{Pipeline: f.p, State: f.fsm, Clock: f.clock, Logger: quiet(), PollInterval: time.Second,
		Drivers: drivers, Registerer: f.reg})
	if err != nil {
		f.t.Fatal(err)
	}
	f.l = l
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = l.Run(ctx) }()
	f.t.Cleanup(func() {
		cancel()
		<-done
		if n := l.Runners(); n != 0 {
			f.t.Errorf("%d provider runners still running after Run returned", n)
		}
	})
}

func (f *fixture) cloud(name string) *sim.Cloud {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.clouds[name]
}

func (f *fixture) run(name string, c commands.Command) {
	f.t.Helper()
	if _, err := f.p.Run(context.Background(), name, commands.Request{Actor: "test"}, c); err != nil {
		f.t.Fatalf("%s: %v", name, err)
	}
}

// provider applies a sim provider serving labels (instance type "small":
// 2 cores, 2048 MB) with the quota given.
func (f *fixture) provider(name string, prio int, quota events.SimQuota, labels ...string) {
	f.t.Helper()
	cfg := events.ProviderConfig{Name: name, Driver: "sim", Priority: prio,
		Pools: []events.ProviderPool{{Name: "main", Labels: labels, NodeAttributes: map[string]string{"zone": "a"}}},
		Sim: &events.SimConfig{InstanceTypes: map[string]events.SimInstanceType{"small": {Cores: 2, RAMMB: 2048}}, Quota: quota,
			BootTime: int64(10 * time.Second)}}
	for _, l := range labels {
		cfg.Labels = append(cfg.Labels, events.LabelConfig{Name: l, InstanceType: "small"})
	}
	f.run("provider.apply", lcmd.ApplyProvider{Config: cfg})
}

func (f *fixture) request(tenant string, labels ...string) string {
	f.t.Helper()
	c := &lcmd.CreateRequest{Labels: labels, Requestor: "ci-42", Tenant: tenant}
	f.run("node-request.create", c)
	return c.ID()
}

func (f *fixture) view() projections.View {
	snap := f.fsm.Store().Snapshot()
	f.t.Cleanup(func() { snap.Close() })
	return projections.NewView(snap)
}

func (f *fixture) req(id string) *plauncher.Request {
	f.t.Helper()
	r, err := plauncher.GetRequest(f.view(), id)
	if err != nil {
		f.t.Fatalf("request %s: %v", id, err)
	}
	return r
}

func (f *fixture) instances(provider string) []*plauncher.Instance {
	f.t.Helper()
	in, err := plauncher.ProviderInstances(f.view(), provider)
	if err != nil {
		f.t.Fatal(err)
	}
	return in
}

// eventually advances the clock a second at a time until cond holds.
func (f *fixture) eventually(what string, cond func() bool) {
	f.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			f.t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
		f.clock.Advance(time.Second)
	}
}

// settle lets the launcher run a while (the clock moving) for checks that
// something does not happen.
func (f *fixture) settle() {
	for range 30 {
		time.Sleep(2 * time.Millisecond)
		f.clock.Advance(time.Second)
	}
}

func stateOf(f *fixture, id string) func() bool {
	return func() bool { return f.req(id).State == events.RequestFulfilled }
}

// A request is fulfilled: the instance builds (counted while building),
// becomes ready and in use, records its requestor (P12) and the pool's
// attributes (P21).
func TestFulfil(t *testing.T) {
	f := newFixture(t)
	f.provider("cheap", 100, events.SimQuota{}, "small")
	f.start()
	id := f.request("", "small")
	f.eventually("fulfilled", stateOf(f, id))
	insts := f.instances("cheap")
	if len(insts) != 1 || insts[0].State != events.InstanceInUse || insts[0].Requestor != "ci-42" || insts[0].Attributes["zone"] != "a" ||
		insts[0].ExternalID == "" {
		t.Fatalf("instances: %+v", insts[0])
	}
	// Deleting the request makes the instance used; the launcher deletes it.
	f.run("node-request.delete", lcmd.DeleteRequest{ID: id})
	f.eventually("instance deleted", func() bool { return len(f.instances("cheap")) == 0 })
	if c := f.cloud("cheap"); c.Live() != 0 {
		t.Fatalf("cloud still holds %d instances", c.Live())
	}
}

// P1: a provider declines only for the request's own labels, and a
// request every provider declined fails, naming why.
func TestDeclineOnlyOwnLabels(t *testing.T) {
	f := newFixture(t)
	f.provider("cheap", 100, events.SimQuota{}, "small")
	f.start()
	id := f.request("", "gpu")
	f.eventually("failed", func() bool { return f.req(id).State == events.RequestFailed })
	r := f.req(id)
	if len(r.DeclinedBy) != 1 || r.DeclinedBy[0].Reason != "no pool serves labels gpu" {
		t.Fatalf("declines: %+v", r.DeclinedBy)
	}
	ok := f.request("", "small")
	f.eventually("fulfilled", stateOf(f, ok))
	if len(f.req(ok).DeclinedBy) != 0 {
		t.Fatal("a servable request was declined")
	}
}

// P11: the cheaper provider (lower priority number) is used first; the
// costly one only when the cheap one declines.
func TestPriority(t *testing.T) {
	f := newFixture(t)
	f.provider("costly", 200, events.SimQuota{}, "small")
	f.provider("cheap", 50, events.SimQuota{}, "small")
	f.start()
	for range 3 {
		id := f.request("", "small")
		f.eventually("fulfilled", stateOf(f, id))
		if p := f.req(id).Provider; p != "cheap" {
			t.Fatalf("fulfilled by %s, want cheap", p)
		}
	}
}

// P7, P9, P19, P24, P25: at quota (counting building instances) the
// provider accepts and pauses; a paused provider still declines what it
// can never serve; the request is fulfilled once quota frees.
func TestPausedAtQuota(t *testing.T) {
	f := newFixture(t)
	f.provider("cheap", 100, events.SimQuota{Cores: 4}, "small")
	f.start()
	a, b := f.request("", "small"), f.request("", "small")
	f.eventually("two fulfilled", func() bool { return stateOf(f, a)() && stateOf(f, b)() })
	c := f.request("", "small")
	f.eventually("paused", func() bool {
		p, _ := plauncher.GetProvider(f.view(), "cheap")
		return p.Paused && p.PausedRequest == c
	})
	// P7: an impossible request (3 labels × 2 cores > 4) is declined while paused.
	imp := f.request("", "small", "small", "small")
	f.eventually("impossible declined", func() bool { return f.req(imp).State == events.RequestFailed })
	if f.req(c).State != events.RequestPending {
		t.Fatalf("paused request: %+v", f.req(c))
	}
	f.run("node-request.delete", lcmd.DeleteRequest{ID: a})
	f.eventually("c fulfilled after quota freed", stateOf(f, c))
	p, _ := plauncher.GetProvider(f.view(), "cheap")
	if p.Paused {
		t.Fatal("still paused")
	}
}

// P24: a launch the cloud refuses for quota aborts the instance (not
// failed) and the request is relaunched and fulfilled, never failed.
func TestQuotaRefusalAborts(t *testing.T) {
	f := newFixture(t)
	f.faults["cheap"] = sim.Faults{QuotaRefusals: 2}
	f.provider("cheap", 100, events.SimQuota{}, "small")
	f.start()
	id := f.request("", "small")
	f.eventually("fulfilled", stateOf(f, id))
	if f.cloud("cheap").Creates() < 3 {
		t.Fatalf("creates %d: want the two refusals relaunched", f.cloud("cheap").Creates())
	}
}

// P2: an instance type the cloud does not have errors the label; the
// request fails at once instead of looping, later requests for the label
// fail without reaching the cloud, and a new configuration starts clean.
func TestPermanentErrorDoesNotLoop(t *testing.T) {
	f := newFixture(t)
	f.faults["cheap"] = sim.Faults{Unknown: []string{"small"}}
	f.provider("cheap", 100, events.SimQuota{}, "small")
	f.start()
	id := f.request("", "small")
	f.eventually("failed", func() bool { return f.req(id).State == events.RequestFailed })
	f.eventually("label errored", func() bool {
		p, _ := plauncher.GetProvider(f.view(), "cheap")
		return p.ErroredLabels["small"] != ""
	})
	creates := f.cloud("cheap").Creates()
	second := f.request("", "small")
	f.eventually("second failed", func() bool { return f.req(second).State == events.RequestFailed })
	f.settle()
	if got := f.cloud("cheap").Creates(); got != creates {
		t.Fatalf("creates went from %d to %d: the errored label looped", creates, got)
	}
	// A new configuration is a clean slate (P6): the cloud now has the type.
	delete(f.faults, "cheap")
	f.provider("cheap", 90, events.SimQuota{}, "small")
	third := f.request("", "small")
	f.eventually("third fulfilled", stateOf(f, third))
}

// P13: a tenant's max-cores holds across two providers.
func TestTenantLimitAcrossProviders(t *testing.T) {
	f := newFixture(t)
	f.run("tenant.apply", lcmd.ApplyTenant{Tenant: events.Tenant{Name: "team-a", MaxCores: 4}})
	f.provider("one", 50, events.SimQuota{}, "small")
	f.provider("two", 60, events.SimQuota{}, "large")
	f.start()
	a, b := f.request("team-a", "small"), f.request("team-a", "large")
	f.eventually("two fulfilled", func() bool { return stateOf(f, a)() && stateOf(f, b)() })
	if f.req(a).Provider == f.req(b).Provider {
		t.Fatal("want one instance on each provider")
	}
	c := f.request("team-a", "small")
	other := f.request("", "small")
	f.eventually("other tenant served", stateOf(f, other))
	f.settle()
	if st := f.req(c).State; st != events.RequestRequested {
		t.Fatalf("third team-a request is %s: the tenant would hold 6 of 4 cores", st)
	}
	f.run("node-request.delete", lcmd.DeleteRequest{ID: a})
	f.eventually("c fulfilled once the tenant has room", stateOf(f, c))
}

// P20: a request deleted while its instance builds is handled without
// errors; the instance is released, and reused by the next request (P3).
func TestVanishedRequestReleasesInstances(t *testing.T) {
	f := newFixture(t)
	f.provider("cheap", 100, events.SimQuota{}, "small")
	f.start()
	id := f.request("", "small")
	f.eventually("building", func() bool { return len(f.instances("cheap")) == 1 })
	f.run("node-request.delete", lcmd.DeleteRequest{ID: id})
	f.eventually("ready and unassigned", func() bool {
		in := f.instances("cheap")
		return len(in) == 1 && in[0].State == events.InstanceReady && in[0].RequestID == ""
	})
	next := f.request("", "small")
	f.eventually("fulfilled by reuse", stateOf(f, next))
	if in := f.instances("cheap"); len(in) != 1 || f.cloud("cheap").Creates() != 1 {
		t.Fatalf("want the ready instance reused: %d instances, %d creates", len(in), f.cloud("cheap").Creates())
	}
}

// P5: one runner goroutine per provider, however many instances build.
func TestOneRunnerPerProvider(t *testing.T) {
	f := newFixture(t)
	f.provider("cheap", 100, events.SimQuota{}, "small")
	f.start()
	var ids []string
	for range 20 {
		ids = append(ids, f.request("", "small"))
	}
	f.eventually("all building", func() bool { return len(f.instances("cheap")) == 20 })
	if n := f.l.Runners(); n != 1 {
		t.Fatalf("%d runners", n)
	}
	f.eventually("all fulfilled", func() bool {
		for _, id := range ids {
			if !stateOf(f, id)() {
				return false
			}
		}
		return true
	})
}

// P4: two launchers racing for one ready instance — both decided on the
// same state — cannot both assign it: the second assignment is refused
// at apply (409) and nothing of it is recorded.
func TestReadyInstanceRaceOnlyOneAssignment(t *testing.T) {
	f := newFixture(t)
	f.provider("cheap", 100, events.SimQuota{}, "small")
	f.start()
	warm := f.request("", "small")
	f.eventually("fulfilled", stateOf(f, warm))
	f.run("node-request.delete", lcmd.DeleteRequest{ID: warm})
	f.eventually("deleted", func() bool { return len(f.instances("cheap")) == 0 })
	// A ready, unassigned instance, made directly so no runner takes it.
	f.run("provider.delete", lcmd.DeleteProvider{Name: "cheap"})
	// A min-ready request's instance stays ready and unassigned.
	mr := &lcmd.CreateRequest{Labels: []string{"small"}, MinReady: true}
	f.run("create", mr)
	a := &lcmd.Accept{Provider: "x", Pool: "main", RequestID: mr.ID(), Launch: []events.Instance{{Label: "small"}}}
	a.RequestModifyIndex = f.req(a.RequestID).ModifyIndex
	f.run("accept", a)
	inst := a.Launched()[0]
	f.run("ready", lcmd.SetInstanceState{ID: inst, State: events.InstanceReady})
	in, _ := plauncher.GetInstance(f.view(), inst)
	if in.State != events.InstanceReady || in.RequestID != "" {
		t.Fatalf("setup: %+v", in)
	}
	r1, r2 := f.req(f.request("", "small")), f.req(f.request("", "small"))
	as := []lcmd.Assignment{{InstanceID: inst, ModifyIndex: in.ModifyIndex}}
	first := &lcmd.Accept{Provider: "x", Pool: "main", RequestID: r1.ID, RequestModifyIndex: r1.ModifyIndex, Assign: as}
	second := &lcmd.Accept{Provider: "x", Pool: "main", RequestID: r2.ID, RequestModifyIndex: r2.ModifyIndex, Assign: as}
	f.run("accept", first)
	_, err := f.p.Run(context.Background(), "accept", commands.Request{}, second)
	var ce *commands.ConflictError
	if !errors.As(err, &ce) {
		t.Fatalf("second assignment: %v, want a conflict", err)
	}
	if got := f.req(r1.ID); got.State != events.RequestFulfilled {
		t.Fatalf("first: %+v", got)
	}
	if got := f.req(r2.ID); got.State != events.RequestRequested || len(got.Instances) != 0 {
		t.Fatalf("second: %+v", got)
	}
}
