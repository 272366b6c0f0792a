package launcher_test

import (
	"testing"

	lcmd "github.com/ordoplane/ordo/commands/launcher"
	"github.com/ordoplane/ordo/events"
)

// metric returns the value of the launcher metric name whose labels
// include labels (a counter or a gauge), 0 when absent.
func (f *fixture) metric(name string, labels map[string]string) float64 {
	f.t.Helper()
	mfs, err := f.reg.Gather()
	if err != nil {
		f.t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	next:
		for _, m := range mf.GetMetric() {
			for k, v := range labels {
				found := false
				for _, lp := range m.GetLabel() {
					found = found || (lp.GetName() == k && lp.GetValue() == v)
				}
				if !found {
					continue next
				}
			}
			if m.Counter != nil {
				return m.GetCounter().GetValue()
			}
			return m.GetGauge().GetValue()
		}
	}
	return 0
}

// The runner keeps an incremental view of the open requests: with a
// backlog of 200 requests a paused provider cannot take, a new request
// makes the runner re-read just that one and a few deleted ones none,
// not the backlog; and the view stays exact (the backlog is served in order once
// quota frees).
func TestRunnerViewIsIncremental(t *testing.T) {
	f := newFixture(t)
	f.provider("cheap", 100, events.SimQuota{Cores: 2}, "small")
	first := f.request("", "small")
	var backlog []string
	for range 200 {
		backlog = append(backlog, f.request("", "small"))
	}
	f.start()
	f.eventually("first fulfilled", stateOf(f, first))
	requested := func(n float64) func() bool {
		return func() bool {
			return f.metric("ordo_launcher_open_requests", map[string]string{"provider": "cheap", "state": events.RequestRequested}) == n
		}
	}
	f.eventually("paused with the backlog requested", func() bool { return f.prov("cheap").Paused && requested(199)() })
	f.settle()
	rereads := func() float64 {
		return f.metric("ordo_launcher_requests_reread_total", map[string]string{"provider": "cheap"})
	}
	before := rereads()
	if before < 200 {
		t.Fatalf("%v requests read by the first load, want the backlog's", before)
	}

	extra := f.request("", "small")
	f.eventually("the new request seen", requested(200))
	for _, id := range backlog[100:110] {
		f.run("node-request.delete", lcmd.DeleteRequest{ID: id})
	}
	f.eventually("the deleted requests gone from the view", requested(190))
	f.settle()
	if d := rereads() - before; d > 3 {
		t.Fatalf("%v requests re-read for 1 created and 10 deleted: want the new one (a deleted one is dropped unread), not the backlog", d)
	}

	f.run("node-request.delete", lcmd.DeleteRequest{ID: first})
	f.eventually("the paused request served once quota frees", stateOf(f, backlog[0]))
	f.run("node-request.delete", lcmd.DeleteRequest{ID: backlog[0]})
	f.eventually("then the next in order", stateOf(f, backlog[1]))
	if st := f.req(extra).State; st != events.RequestRequested {
		t.Fatalf("the newest request is %s before the backlog ahead of it", st)
	}
}
