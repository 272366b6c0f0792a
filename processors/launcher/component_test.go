package launcher_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ordoplane/ordo/clock/clocktest"
	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/commandstest"
	lcmd "github.com/ordoplane/ordo/commands/launcher"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/processors/launcher"
	"github.com/ordoplane/ordo/processors/launcher/driver"
	"github.com/ordoplane/ordo/processors/launcher/driver/sim"
	"github.com/ordoplane/ordo/processors/launcher/driver/static"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/fsm"
	plauncher "github.com/ordoplane/ordo/projections/launcher"
	pt "github.com/ordoplane/ordo/projections/projectionstest"
	"github.com/ordoplane/ordo/storage/nettest"
	"github.com/ordoplane/ordo/storage/raftlog"
)

// sharedLog applies each entry, in order, to every server's FSM (each
// on its own Pebble store), as a raft log replicated to two servers
// would.
type sharedLog struct {
	mu   sync.Mutex
	fsms []*fsm.FSM
}

func (l *sharedLog) Append(_ context.Context, data []byte) (any, uint64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	index := l.fsms[0].Applied() + 1
	var res any
	for i, f := range l.fsms {
		r := f.Apply([]raftlog.Log{{Index: index, Term: 1, Data: data}})[0]
		if i == 0 {
			res = r
		}
	}
	return res, index, nil
}

// server is one server: its FSM, a pipeline deciding on it, a launcher.
type server struct {
	name   string
	fsm    *fsm.FSM
	p      *commands.Pipeline
	cancel context.CancelFunc
	done   chan struct{}
}

// components renders the launcher components server sees: "server:
// provider/pool@driver ..." per component, by server.
func (s *server) components(t *testing.T) string {
	t.Helper()
	snap := s.fsm.Store().Snapshot()
	defer snap.Close()
	cs, err := plauncher.Components(projections.NewView(snap), events.ComponentLauncher)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, c := range cs {
		var ps []string
		for _, p := range c.Pools {
			ps = append(ps, fmt.Sprintf("%s/%s@%s", p.Provider, p.Pool, p.Driver))
		}
		out = append(out, c.Server+": "+strings.Join(ps, " "))
	}
	return strings.Join(out, "; ")
}

// P10: launcher pools are registered as components every server sees
// live. Two servers share one log; server a's launcher runs the sim
// providers, server b's the static ones. Each server's state shows both
// launchers' pools, follows a provider added or removed, drops a
// launcher that stops, and a launcher component not heard from for a TTL
// is removed by the leader's liveness tracker (on a), which both
// launchers heartbeat to.
func TestLauncherPoolsAreComponents(t *testing.T) {
	clock := clocktest.NewClock(time.Unix(1_700_000_000, 0))
	log := &sharedLog{}
	ids := commandstest.SequentialIDs()
	servers := map[string]*server{}
	for _, name := range []string{"a", "b"} {
		store := pt.OpenStore(t)
		fsm := pt.NewFSM(t, store)
		log.fsms = append(log.fsms, fsm)
		p := commandstest.NewPipeline(t, commands.PipelineConfig{Log: log, Store: store, Applied: fsm.Applied, Clock: clock,
			Logger: quiet(), IDs: ids})
		servers[name] = &server{name: name, fsm: fsm, p: p}
	}
	a, b := servers["a"], servers["b"]
	live, err := launcher.NewLiveness(launcher.LivenessConfig{Pipeline: a.p, State: a.fsm, Clock: clock, TTL: 30 * time.Second,
		Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	lctx, lcancel := context.WithCancel(context.Background())
	ldone := make(chan struct{})
	go func() { defer close(ldone); _ = live.Run(lctx) }()
	t.Cleanup(func() { lcancel(); <-ldone })
	start := func(s *server, drivers map[string]launcher.Factory) {
		l, err := launcher.New(launcher.Config{Pipeline: s.p, State: s.fsm, Clock: clock, Logger: quiet(), Server: s.name,
			Heartbeat: 10 * time.Second, Liveness: live, Drivers: drivers})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		s.cancel, s.done = cancel, make(chan struct{})
		go func() { defer close(s.done); _ = l.Run(ctx) }()
		t.Cleanup(func() { cancel(); <-s.done })
	}
	run := func(c commands.Command) {
		t.Helper()
		if _, err := a.p.Run(context.Background(), "test", commands.Request{Actor: "test"}, c); err != nil {
			t.Fatal(err)
		}
	}
	eventually := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s: a sees %q, b sees %q", what, a.components(t), b.components(t))
			}
			time.Sleep(2 * time.Millisecond)
			clock.Advance(time.Second)
		}
	}
	both := func(want string) func() bool {
		return func() bool { return a.components(t) == want && b.components(t) == want }
	}

	simCfg := func(name string) events.ProviderConfig {
		return events.ProviderConfig{Name: name, Driver: "sim", Priority: 100,
			Pools:  []events.ProviderPool{{Name: "main", Labels: []string{"small"}}},
			Labels: []events.LabelConfig{{Name: "small", InstanceType: "small"}},
			Sim:    &events.SimConfig{InstanceTypes: map[string]events.SimInstanceType{"small": {Cores: 1}}}}
	}
	run(lcmd.ApplyProvider{Config: simCfg("cloud")})
	run(lcmd.ApplyProvider{Config: events.ProviderConfig{Name: "lab", Driver: "static", Priority: 100,
		Pools: []events.ProviderPool{{Name: "racks", Labels: []string{"bare"}}}, Labels: []events.LabelConfig{{Name: "bare"}},
		Static: &events.StaticConfig{Hosts: []events.StaticHost{{Name: "h1", Address: nettest.ClosedAddr(t), Labels: []string{"bare"}}}}}})
	start(a, map[string]launcher.Factory{"sim": func(cfg events.ProviderConfig) (driver.Driver, error) {
		return sim.New(*cfg.Sim, sim.Faults{}), nil
	}})
	start(b, map[string]launcher.Factory{"static": func(cfg events.ProviderConfig) (driver.Driver, error) {
		return static.New(*cfg.Static, static.Config{Timeout: time.Second}), nil
	}})
	eventually("both launchers' pools on both servers", both("a: cloud/main@sim; b: lab/racks@static"))

	run(lcmd.ApplyProvider{Config: simCfg("cloud-2")})
	eventually("a provider added", both("a: cloud/main@sim cloud-2/main@sim; b: lab/racks@static"))
	run(lcmd.DeleteProvider{Name: "cloud"})
	eventually("a provider removed", both("a: cloud-2/main@sim; b: lab/racks@static"))

	// A server that stopped without deregistering: removed once stale,
	// while both live launchers keep theirs by their heartbeats.
	run(lcmd.RegisterComponent{Component: events.Component{Kind: events.ComponentLauncher, Server: "ghost",
		Pools: []events.LauncherPool{{Provider: "old", Pool: "main", Driver: "sim"}}}})
	if got := b.components(t); !strings.Contains(got, "ghost: old/main@sim") {
		t.Fatalf("b sees %q, want the ghost registered", got)
	}
	eventually("the stale component removed", both("a: cloud-2/main@sim; b: lab/racks@static"))

	b.cancel()
	<-b.done
	eventually("a stopped launcher deregistered", both("a: cloud-2/main@sim"))
}
