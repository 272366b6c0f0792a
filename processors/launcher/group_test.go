package launcher_test

import (
	"slices"
	"testing"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/storage/archive"
)

// indexes returns the distinct indexes at which events of type typ
// about the requests ids committed, in order.
func (f *fixture) indexes(typ string, ids []string) []uint64 {
	return f.indexesOf(typ, events.KindNodeRequest, ids)
}

// indexesOf returns the distinct indexes at which events of type typ
// about the entities of kind ids committed, in order.
func (f *fixture) indexesOf(typ, kind string, ids []string) []uint64 {
	f.t.Helper()
	snap := f.fsm.Store().Snapshot()
	defer snap.Close()
	var out []uint64
	err := archive.Scan(snap, 1, 0, func(index uint64, _ uint32, data []byte) error {
		ev, err := events.DecodeEvent(data)
		if err != nil {
			return err
		}
		if ev.Type == typ && slices.Contains(ids, ev.Key(kind)) && !slices.Contains(out, index) {
			out = append(out, index)
		}
		return nil
	})
	if err != nil {
		f.t.Fatal(err)
	}
	return out
}

// A pass commits its decisions together: requests waiting when the
// runner starts are all accepted in one entry (their launches with
// them), and their instances, ready in one pass, fulfil them in one
// entry.
func TestPassCommitsItsDecisionsInOneEntry(t *testing.T) {
	f := newFixture(t)
	f.provider("cheap", 100, events.SimQuota{Instances: 10}, "small")
	var ids []string
	for range 5 {
		ids = append(ids, f.request("", "small"))
	}
	f.start()
	f.eventually("all fulfilled", func() bool {
		return !slices.ContainsFunc(ids, func(id string) bool { return !stateOf(f, id)() })
	})
	if at := f.indexes("NodeRequestStateChanged", ids); len(at) != 1 {
		t.Errorf("accepted at indexes %v; want one entry", at)
	}
	if at := f.indexes("InstanceCreated", ids); len(at) != 1 {
		t.Errorf("launched at indexes %v; want one entry", at)
	}
	if at := f.indexes("NodeRequestFulfilled", ids); len(at) != 1 {
		t.Errorf("fulfilled at indexes %v; want one entry", at)
	}
}

// The instances of one request turning ready in one pass go to the log
// one group after the other: in one group each would be decided before
// the others applied, see them still building, and the request would
// never be fulfilled. Another request's instance shares a group.
func TestInstancesOfOneRequestReadyInOnePass(t *testing.T) {
	f := newFixture(t)
	f.provider("cheap", 100, events.SimQuota{}, "small")
	a := f.request("", "small", "small", "small")
	b := f.request("", "small")
	f.start()
	f.eventually("both fulfilled", func() bool { return stateOf(f, a)() && stateOf(f, b)() })
	insts := f.req(a).Instances
	if len(insts) != 3 {
		t.Fatalf("a fulfilled with %d instances; want 3", len(insts))
	}
	if at := f.indexesOf("InstanceStateChanged", events.KindInstance, insts); len(at) != 3 {
		t.Fatalf("a's instances ready at %v; want three entries", at)
	}
	if at := f.indexes("NodeRequestStateChanged", []string{a, b}); len(at) != 1 {
		t.Fatalf("a and b accepted at %v; want one entry", at)
	}
}
