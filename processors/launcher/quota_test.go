package launcher_test

import (
	"errors"
	"strings"
	"testing"

	lcmd "github.com/ordoplane/ordo/commands/launcher"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/processors/launcher/driver/sim"
	"github.com/ordoplane/ordo/projections"
	plauncher "github.com/ordoplane/ordo/projections/launcher"
)

// provider returns the provider's row.
func (f *fixture) prov(name string) *plauncher.Provider {
	f.t.Helper()
	p, err := plauncher.GetProvider(f.view(), name)
	if err != nil {
		f.t.Fatalf("provider %s: %v", name, err)
	}
	return p
}

// minReadyRequest makes a request as the launcher's min-ready does.
func (f *fixture) minReadyRequest(label string) string {
	f.t.Helper()
	c := &lcmd.CreateRequest{Labels: []string{label}, Requestor: "launcher:min-ready", MinReady: true}
	f.run("node-request.create", c)
	return c.ID()
}

// P14, P9: quota and instance type resources come from the provider.
// Before the quota was ever read nothing is accepted on a guess; once
// read, a provider whose quota and type APIs fail is served from the
// cached values: it pauses at the cached quota (no create reaches the
// cloud) and launches with the cached type's cores.
func TestQuotaFromProviderCachedOnError(t *testing.T) {
	f := newFixture(t)
	f.faults["cheap"] = sim.Faults{QuotaErrors: 1 << 30}
	f.provider("cheap", 100, events.SimQuota{Cores: 4}, "small")
	f.start()
	a := f.request("", "small")
	f.settle()
	if st, n := f.req(a).State, f.cloud("cheap").Creates(); st != events.RequestRequested || n != 0 {
		t.Fatalf("quota never read: request is %s and %d creates reached the cloud; want requested and none", st, n)
	}
	f.cloud("cheap").Inject(sim.Faults{})
	f.eventually("a fulfilled once the quota is read", stateOf(f, a))
	b := f.request("", "small")
	f.eventually("b fulfilled", stateOf(f, b))

	f.cloud("cheap").Inject(sim.Faults{QuotaErrors: 1 << 30, TypeErrors: 1 << 30})
	creates := f.cloud("cheap").Creates()
	c := f.request("", "small")
	f.eventually("paused at the cached quota", func() bool {
		p := f.prov("cheap")
		return p.Paused && p.PausedRequest == c
	})
	if p := f.prov("cheap"); !strings.Contains(p.PauseReason, "quota cores") {
		t.Fatalf("pause reason %q: want the cached cores quota", p.PauseReason)
	}
	if n := f.cloud("cheap").Creates(); n != creates {
		t.Fatalf("creates went from %d to %d: the quota was ignored while its API failed", creates, n)
	}
	f.run("node-request.delete", lcmd.DeleteRequest{ID: a})
	f.eventually("c fulfilled from the cached type", stateOf(f, c))
	in, err := plauncher.GetInstance(f.view(), f.req(c).Instances[0])
	if err != nil || in.Cores != 2 || in.RAMMB != 2048 {
		t.Fatalf("c's instance %+v (%v): want the cached type's 2 cores, 2048 MB", in, err)
	}
}

// P23: a min-ready request is declined only when really at quota. With
// two of three instances in use it is fulfilled (its instance stays
// ready, and serves the next user request); at quota it is declined,
// naming the quota, and the provider does not pause for it; once an
// instance is deleted the next one is fulfilled.
func TestMinReadyDeclinedOnlyAtQuota(t *testing.T) {
	f := newFixture(t)
	f.provider("cheap", 100, events.SimQuota{Cores: 6}, "small")
	f.start()
	a, b := f.request("", "small"), f.request("", "small")
	f.eventually("two fulfilled", func() bool { return stateOf(f, a)() && stateOf(f, b)() })

	mr := f.minReadyRequest("small")
	f.eventually("min-ready fulfilled (and deleted)", func() bool {
		_, err := plauncher.GetRequest(f.view(), mr)
		return errors.Is(err, projections.ErrNotFound)
	})
	ready := 0
	for _, in := range f.instances("cheap") {
		if in.State == events.InstanceReady && in.RequestID == "" {
			ready++
		}
	}
	if ready != 1 {
		t.Fatalf("%d ready unassigned instances, want the min-ready one", ready)
	}

	c := f.request("", "small")
	f.eventually("user request served by the ready instance", stateOf(f, c))
	if n := len(f.instances("cheap")); n != 3 {
		t.Fatalf("%d instances, want 3 (the ready one reused)", n)
	}

	full := f.minReadyRequest("small")
	f.eventually("min-ready declined at quota", func() bool { return f.req(full).State == events.RequestFailed })
	if d := f.req(full).DeclinedBy; len(d) != 1 || !strings.Contains(d[0].Reason, "at quota") {
		t.Fatalf("declines %+v: want one naming the quota", d)
	}
	if p := f.prov("cheap"); p.Paused {
		t.Fatalf("paused for a min-ready request: %+v", p)
	}
	f.run("node-request.delete", lcmd.DeleteRequest{ID: a})
	f.eventually("a's instance deleted", func() bool { return len(f.instances("cheap")) == 2 })
	again := f.minReadyRequest("small")
	f.eventually("min-ready fulfilled once below quota", func() bool {
		_, err := plauncher.GetRequest(f.view(), again)
		return errors.Is(err, projections.ErrNotFound)
	})
}

// P27: an error in the handler the provider paused for unpauses the
// provider and releases the request (here the cloud starts denying the
// instance type while paused): the provider does not stay paused, and
// the released request then fails on the errored label (P2).
func TestErrorWhilePausedUnpauses(t *testing.T) {
	f := newFixture(t)
	f.provider("cheap", 100, events.SimQuota{Cores: 4}, "small")
	f.start()
	a, b := f.request("", "small"), f.request("", "small")
	f.eventually("two fulfilled", func() bool { return stateOf(f, a)() && stateOf(f, b)() })
	c := f.request("", "small")
	f.eventually("paused for c", func() bool {
		p := f.prov("cheap")
		return p.Paused && p.PausedRequest == c
	})
	f.cloud("cheap").Inject(sim.Faults{Unknown: []string{"small"}})
	f.eventually("unpaused and c no longer pending", func() bool {
		return !f.prov("cheap").Paused && f.req(c).State != events.RequestPending
	})
	f.eventually("c failed on the errored label", func() bool { return f.req(c).State == events.RequestFailed })
	if p := f.prov("cheap"); p.ErroredLabels["small"] == "" || p.Paused {
		t.Fatalf("provider %+v: want label small errored and not paused", p)
	}
}
