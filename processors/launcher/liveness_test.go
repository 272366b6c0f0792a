package launcher_test

import (
	"context"
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
	plauncher "github.com/ordoplane/ordo/projections/launcher"
	pt "github.com/ordoplane/ordo/projections/projectionstest"
	"github.com/ordoplane/ordo/storage/waittest"
)

const (
	beatEvery = 10 * time.Second
	ttl       = 3 * beatEvery
)

// leader is one server's state, pipeline and clock, with the liveness
// tracker and launcher it runs while it leads.
type leader struct {
	t     *testing.T
	fsm   interface{ Applied() uint64 }
	state launcher.State
	p     *commands.Pipeline
	clock *clocktest.Clock
	reg   *prometheus.Registry
	live  *launcher.Liveness
}

func newLeader(t *testing.T) *leader {
	store := pt.OpenStore(t)
	fsm := pt.NewFSM(t, store)
	clock := clocktest.NewClock(time.Unix(1_700_000_000, 0))
	p := commandstest.NewPipeline(t, commands.PipelineConfig{Log: &pt.FSMLog{FSM: fsm}, Store: store, Applied: fsm.Applied,
		Clock: clock, Logger: quiet()})
	return &leader{t: t, fsm: fsm, state: fsm, p: p, clock: clock}
}

// leading returns a leader running the tracker and the launcher of
// server, its component registered.
func leading(t *testing.T, server string) *leader {
	s := newLeader(t)
	s.lead()
	s.launch(server)
	s.waitRegistered(server)
	return s
}

// lead starts a liveness tracker, as a server does when it starts
// leading; the returned func stops it, as losing leadership does.
func (s *leader) lead() (stop func()) {
	s.reg = prometheus.NewRegistry()
	l, err := launcher.NewLiveness(launcher.LivenessConfig{Pipeline: s.p, State: s.state, Clock: s.clock, TTL: ttl,
		Logger: quiet(), Registerer: s.reg})
	if err != nil {
		s.t.Fatal(err)
	}
	s.live = l
	return s.goRun(l.Run)
}

// launch starts a launcher of server beating into the tracker.
func (s *leader) launch(server string) (stop func()) {
	l, err := launcher.New(launcher.Config{Pipeline: s.p, State: s.state, Clock: s.clock, Logger: quiet(), Server: server,
		Heartbeat: beatEvery, Liveness: s.live, Drivers: map[string]launcher.Factory{"sim": func(cfg events.ProviderConfig) (driver.Driver, error) {
			return sim.New(*cfg.Sim, sim.Faults{}), nil
		}}})
	if err != nil {
		s.t.Fatal(err)
	}
	return s.goRun(l.Run)
}

func (s *leader) goRun(run func(context.Context) error) func() {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = run(ctx) }()
	stop := func() { cancel(); <-done }
	s.t.Cleanup(stop)
	return stop
}

func (s *leader) run(c commands.Command) {
	s.t.Helper()
	if _, err := s.p.Run(context.Background(), "test", commands.Request{Actor: "test"}, c); err != nil {
		s.t.Fatal(err)
	}
}

func (s *leader) component(server string) *plauncher.Component {
	s.t.Helper()
	snap := s.state.ReadSnapshot()
	defer snap.Close()
	c, err := plauncher.GetComponent(projections.NewView(snap), events.ComponentLauncher+"/"+server)
	if err != nil {
		return nil
	}
	return c
}

// register registers a component of server with no pools, as its
// launcher would.
func (s *leader) register(server string) {
	s.t.Helper()
	s.run(lcmd.RegisterComponent{Component: events.Component{Kind: events.ComponentLauncher, Server: server}})
}

func (s *leader) waitRegistered(server string) {
	s.t.Helper()
	waittest.For(s.t, 10*time.Second, server+"'s component registered", func() bool { return s.component(server) != nil })
}

// waitGone advances the clock a second at a time until server's
// component is deregistered.
func (s *leader) waitGone(server string) {
	s.t.Helper()
	waittest.For(s.t, 10*time.Second, server+"'s component deregistered", func() bool {
		s.clock.Advance(time.Second)
		return s.component(server) == nil
	})
}

// advance moves the clock d a second at a time, letting the launcher and
// the tracker keep up.
func (s *leader) advance(d time.Duration) {
	s.t.Helper()
	end := s.clock.Now().Add(d)
	waittest.For(s.t, 20*time.Second, "the clock advanced", func() bool {
		s.clock.Advance(time.Second)
		return !s.clock.Now().Before(end)
	})
}

// An idle launcher appends nothing: after it registered its (empty) pool
// set, twenty heartbeats reach the leader's memory and the applied index
// does not move. Its last heartbeat shows in the tracker.
func TestIdleLauncherAppendsNothing(t *testing.T) {
	s := leading(t, "a")
	before := s.fsm.Applied()
	s.advance(20 * beatEvery)
	if after := s.fsm.Applied(); after != before {
		t.Fatalf("an idle launcher appended %d entries over 20 heartbeats", after-before)
	}
	last, _, alive, ok := s.live.Liveness("launcher/a")
	if !ok || !alive || s.clock.Now().Sub(last) > 2*beatEvery {
		t.Fatalf("liveness of launcher/a: last %v (now %v), alive %t, tracked %t", last, s.clock.Now(), alive, ok)
	}
}

// A changed pool set is logged once (one ComponentRegistered), and
// heartbeats afterwards log nothing.
func TestChangedPoolsLoggedOnce(t *testing.T) {
	s := leading(t, "a")
	before := s.fsm.Applied()
	s.run(lcmd.ApplyProvider{Config: events.ProviderConfig{Name: "cloud", Driver: "sim", Priority: 10,
		Pools:  []events.ProviderPool{{Name: "main", Labels: []string{"small"}}},
		Labels: []events.LabelConfig{{Name: "small", InstanceType: "small"}},
		Sim:    &events.SimConfig{InstanceTypes: map[string]events.SimInstanceType{"small": {Cores: 1}}}}})
	waittest.For(t, 10*time.Second, "the new pool registered", func() bool {
		c := s.component("a")
		return c != nil && len(c.Pools) == 1
	})
	s.advance(10 * beatEvery)
	if got := s.fsm.Applied() - before; got != 2 {
		t.Fatalf("%d entries after a provider was applied, want 2 (the provider, the component's new pools)", got)
	}
}

// A component that stops heartbeating is deregistered once its TTL has
// passed, and counted; a live one stays.
func TestSilentComponentDeregistered(t *testing.T) {
	s := newLeader(t)
	s.lead()
	s.launch("a")
	s.register("ghost")
	s.advance(ttl - 2*time.Second)
	if s.component("ghost") == nil {
		t.Fatal("the ghost deregistered before its TTL")
	}
	s.waitGone("ghost")
	if got := s.stale(); got != 1 {
		t.Fatalf("ordo_component_stale_total = %v, want 1", got)
	}
	if s.component("a") == nil {
		t.Fatal("the live launcher's component was deregistered")
	}
}

// stale reads ordo_component_stale_total for launchers.
func (s *leader) stale() float64 {
	s.t.Helper()
	mfs, err := s.reg.Gather()
	if err != nil {
		s.t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "ordo_component_stale_total" {
			return mf.GetMetric()[0].GetCounter().GetValue()
		}
	}
	return 0
}

// A leadership change deregisters no live component: the new leader
// starts every component's TTL afresh, though the old leader last heard
// from it nearly a TTL ago; it is deregistered only once silent for a
// whole TTL under the new leader.
func TestLeaderChangeKeepsLiveComponents(t *testing.T) {
	s := newLeader(t)
	stop := s.lead()
	s.register("b")
	if _, err := s.live.Heartbeat(events.ComponentLauncher, "b"); err != nil {
		t.Fatal(err)
	}
	stop() // leadership lost
	s.clock.Advance(ttl - time.Second)
	s.lead() // a new leader
	s.advance(ttl / 2)
	if s.component("b") == nil {
		t.Fatal("a new leader deregistered a component the old one had heard from within its TTL")
	}
	if _, err := s.live.Heartbeat(events.ComponentLauncher, "b"); err != nil { // b heartbeats to the new leader
		t.Fatal(err)
	}
	s.advance(ttl - 2*time.Second)
	if s.component("b") == nil {
		t.Fatal("deregistered while heartbeating to the new leader")
	}
	s.waitGone("b")
	// A deregistered component's heartbeat is refused: it registers again.
	if _, err := s.live.Heartbeat(events.ComponentLauncher, "b"); err == nil {
		t.Fatal("the heartbeat of a deregistered component was accepted")
	}
}
