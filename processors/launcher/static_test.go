package launcher_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	lcmd "github.com/ordoplane/ordo/commands/launcher"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/processors/launcher"
	"github.com/ordoplane/ordo/processors/launcher/driver"
	"github.com/ordoplane/ordo/processors/launcher/driver/static"
	plauncher "github.com/ordoplane/ordo/projections/launcher"
	"github.com/ordoplane/ordo/storage/nettest"
)

// instanceByID returns the instance, or nil when it is gone.
func (f *fixture) instanceByID(id string) *plauncher.Instance {
	in, err := plauncher.GetInstance(f.view(), id)
	if err != nil {
		return nil
	}
	return in
}

// withStatic adds the static driver, dialling for real.
func (f *fixture) withStatic() {
	f.drivers = map[string]launcher.Factory{"static": func(cfg events.ProviderConfig) (driver.Driver, error) {
		return static.New(*cfg.Static, static.Config{Timeout: time.Second}), nil
	}}
}

// staticProvider applies a static provider whose pool "main" serves
// labels, with hosts.
func (f *fixture) staticProvider(name string, labels []string, hosts ...events.StaticHost) {
	f.t.Helper()
	cfg := events.ProviderConfig{Name: name, Driver: "static", Priority: 100,
		Pools:  []events.ProviderPool{{Name: "main", Labels: labels, NodeAttributes: map[string]string{"rack": "r1"}}},
		Static: &events.StaticConfig{Hosts: hosts}}
	for _, l := range labels {
		cfg.Labels = append(cfg.Labels, events.LabelConfig{Name: l})
	}
	f.run("provider.apply", lcmd.ApplyProvider{Config: cfg})
}

// listen returns a real listener closed when the test ends.
func listen(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln
}

func host(name, addr string, labels ...string) events.StaticHost {
	return events.StaticHost{Name: name, Address: addr, Labels: labels}
}

// hosts renders the provider's instances as "host@address:state" sorted.
func (f *fixture) hosts(provider string) string {
	var out []string
	for _, in := range f.instances(provider) {
		out = append(out, fmt.Sprintf("%s@%s:%s", in.ExternalID, strings.Join(in.Addresses, ","), in.State))
	}
	slices.Sort(out)
	return strings.Join(out, " ")
}

// P29: a static provider's hosts are registered as ready instances when
// it starts and again when its configuration changes: a host that left
// is deregistered, a new one registered, a changed one re-registered —
// but a host in use is left to its requestor until it is done.
func TestStaticHostsRegistered(t *testing.T) {
	f := newFixture(t)
	f.withStatic()
	a, b := listen(t).Addr().String(), listen(t).Addr().String()
	f.staticProvider("lab", []string{"bare"}, host("h1", a, "bare"), host("h2", b, "bare"))
	f.start()
	want := fmt.Sprintf("h1@%s:ready h2@%s:ready", a, b)
	f.eventually("hosts registered on start", func() bool { return f.hosts("lab") == want })
	for _, in := range f.instances("lab") {
		if in.Pool != "main" || in.Label != "bare" || in.Attributes["rack"] != "r1" {
			t.Fatalf("registered host %+v: want pool main, label bare, the pool's attributes", in)
		}
	}

	a2, c := listen(t).Addr().String(), listen(t).Addr().String()
	f.staticProvider("lab", []string{"bare"}, host("h1", a2, "bare"), host("h3", c, "bare"))
	want = fmt.Sprintf("h1@%s:ready h3@%s:ready", a2, c)
	f.eventually("hosts registered on config change", func() bool { return f.hosts("lab") == want })

	id := f.request("", "bare")
	f.eventually("fulfilled by a host", stateOf(f, id))
	used := f.instances("lab")[slices.IndexFunc(f.instances("lab"), func(in *plauncher.Instance) bool { return in.State == events.InstanceInUse })]
	moved := listen(t).Addr().String()
	others := map[string]string{"h1": a2, "h3": c}
	others[used.ExternalID] = moved
	f.staticProvider("lab", []string{"bare"}, host("h1", others["h1"], "bare"), host("h3", others["h3"], "bare"))
	f.settle()
	if in := f.instanceByID(used.ID); in == nil || in.State != events.InstanceInUse {
		t.Fatalf("host in use across a config change: %+v, want it left in use", in)
	}
	f.run("node-request.delete", lcmd.DeleteRequest{ID: id})
	want = fmt.Sprintf("h1@%s:ready h3@%s:ready", others["h1"], others["h3"])
	f.eventually("changed host re-registered once returned", func() bool { return f.hosts("lab") == want })
}

// P8: a static provider never pauses. A request for a label whose only
// host is unreachable is left requested — not declined — while requests
// for reachable hosts are served; once the host answers it is served. A
// request its hosts can never hold is declined; one waiting for a busy
// host is served when the host is returned (not deleted).
func TestStaticNeverPauses(t *testing.T) {
	f := newFixture(t)
	f.withStatic()
	up, down := listen(t).Addr().String(), nettest.ClosedAddr(t)
	f.staticProvider("lab", []string{"bare", "gpu"}, host("h1", up, "bare"), host("h2", down, "gpu"))
	f.start()
	f.eventually("hosts registered", func() bool { return len(f.instances("lab")) == 2 })

	gpu := f.request("", "gpu")
	bare := f.request("", "bare")
	f.eventually("bare served past the unreachable gpu host", stateOf(f, bare))
	f.settle()
	if r := f.req(gpu); r.State != events.RequestRequested || len(r.DeclinedBy) != 0 {
		t.Fatalf("request for an unreachable host: %+v, want requested and not declined", r)
	}
	if p := f.prov("lab"); p.Paused {
		t.Fatalf("static provider paused: %+v", p)
	}

	two := f.request("", "gpu", "gpu")
	f.eventually("impossible request declined", func() bool { return f.req(two).State == events.RequestFailed })
	if d := f.req(two).DeclinedBy; len(d) != 1 || !strings.Contains(d[0].Reason, "2 hosts with label gpu needed, 1 configured") {
		t.Fatalf("declines %+v", d)
	}

	ln, err := net.Listen("tcp", down)
	if err != nil {
		t.Fatalf("listen again on %s: %v", down, err)
	}
	t.Cleanup(func() { ln.Close() })
	f.eventually("gpu served once its host answers", stateOf(f, gpu))

	h1 := f.req(bare).Instances[0]
	again := f.request("", "bare")
	f.settle()
	if r := f.req(again); r.State != events.RequestRequested || len(r.DeclinedBy) != 0 || f.prov("lab").Paused {
		t.Fatalf("request for a busy host: %+v, want requested, not declined, provider not paused", r)
	}
	f.run("node-request.delete", lcmd.DeleteRequest{ID: bare})
	f.eventually("served by the returned host", stateOf(f, again))
	if got := f.req(again).Instances; len(got) != 1 || got[0] != h1 {
		t.Fatalf("instances %v, want the returned host's %s", got, h1)
	}
}

// Static hosts in two pools: each request gets a host of the pool
// serving its label, and handing one out leaves the other pool's free
// hosts as they were.
func TestStaticTwoPools(t *testing.T) {
	f := newFixture(t)
	f.withStatic()
	a, b := listen(t).Addr().String(), listen(t).Addr().String()
	f.run("provider.apply", lcmd.ApplyProvider{Config: events.ProviderConfig{Name: "lab", Driver: "static", Priority: 100,
		Pools:  []events.ProviderPool{{Name: "p", Labels: []string{"bare"}}, {Name: "racks-long", Labels: []string{"gpu"}}},
		Labels: []events.LabelConfig{{Name: "bare"}, {Name: "gpu"}},
		Static: &events.StaticConfig{Hosts: []events.StaticHost{host("h1", a, "bare"), host("h2", b, "gpu")}}}})
	f.start()
	f.eventually("hosts registered", func() bool { return len(f.instances("lab")) == 2 })
	gpu, bare := f.request("", "gpu"), f.request("", "bare")
	f.eventually("both served", func() bool { return stateOf(f, gpu)() && stateOf(f, bare)() })
	for id, want := range map[string]string{gpu: "h2", bare: "h1"} {
		if in := f.instanceByID(f.req(id).Instances[0]); in == nil || in.ExternalID != want {
			t.Fatalf("request %s got %+v, want host %s", id, in, want)
		}
	}
}

// gateDialer answers a static driver's reachability checks as the test
// says: each dial waits until released, the first `down` hosts dialled are
// unreachable and the others answer. Once open, dials answer at once.
type gateDialer struct {
	down int
	mu   sync.Mutex
	// waiting are the dials in flight, each released by closing its chan.
	waiting []chan struct{}
	dialled []string
	open    bool
}

func (d *gateDialer) DialContext(ctx context.Context, _, addr string) (net.Conn, error) {
	d.mu.Lock()
	first := !slices.Contains(d.dialled, addr)
	if first {
		d.dialled = append(d.dialled, addr)
	}
	isDown := slices.Index(d.dialled, addr) < d.down
	release := make(chan struct{})
	if !d.open {
		d.waiting = append(d.waiting, release)
	} else {
		close(release)
	}
	d.mu.Unlock()
	select {
	case <-release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if isDown {
		return nil, errors.New("connection refused")
	}
	c, peer := net.Pipe()
	peer.Close()
	return c, nil
}

// inFlight returns how many dials wait.
func (d *gateDialer) inFlight() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.waiting)
}

// release lets the waiting dials answer; with open, later ones too.
func (d *gateDialer) release(open bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, c := range d.waiting {
		close(c)
	}
	d.waiting, d.open = nil, open
}

// P8: a pass checks the static hosts it may hand out in rounds run at
// once, doubling for the hosts found down — not one host, and one
// timeout, at a time — and dials none while no request is open.
func TestStaticHostsCheckedInRounds(t *testing.T) {
	f := newFixture(t)
	d := &gateDialer{down: 3}
	f.drivers = map[string]launcher.Factory{"static": func(cfg events.ProviderConfig) (driver.Driver, error) {
		return static.New(*cfg.Static, static.Config{Timeout: time.Minute, Dialer: d}), nil
	}}
	var hosts []events.StaticHost
	for i := range 6 {
		hosts = append(hosts, host(fmt.Sprintf("h%d", i), fmt.Sprintf("10.0.0.%d:22", i+1), "bare"))
	}
	f.staticProvider("lab", []string{"bare"}, hosts...)
	f.start()
	f.eventually("hosts registered", func() bool { return len(f.instances("lab")) == 6 })
	f.settle()
	if n := d.inFlight(); n != 0 {
		t.Fatalf("%d hosts dialled with no request open", n)
	}

	id := f.request("", "bare")
	// One host asked for: one checked; it is down, so two more at once;
	// both down, so four more — three are left, and they answer.
	for i, want := range []int{1, 2, 3} {
		f.eventually(fmt.Sprintf("round %d: %d checks at once", i, want), func() bool { return d.inFlight() == want })
		d.release(i == 2)
	}
	f.eventually("served by a host that answers", stateOf(f, id))
	up := map[string]bool{}
	for _, addr := range d.dialled[3:6] {
		up[addr] = true
	}
	for _, in := range f.instances("lab") {
		if in.State == events.InstanceInUse && !up[in.Addresses[0]] {
			t.Fatalf("request served by %s, which did not answer", in.Addresses[0])
		}
	}
}
