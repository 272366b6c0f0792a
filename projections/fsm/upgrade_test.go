package fsm_test

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/all"
	"github.com/ordoplane/ordo/projections/fsm"
	"github.com/ordoplane/ordo/projections/namespaces"
	pt "github.com/ordoplane/ordo/projections/projectionstest"
	"github.com/ordoplane/ordo/storage/kv"
)

// fixtureOrder is the order the upgrade archive replays the golden
// fixtures in: things exist before what refers to them, deletions last.
var fixtureOrder = []string{"Server", "Namespace", "Node", "Job", "Eval", "Deployment", "Allocs", "NodeAllocs"}

func fixtureRank(name string) (int, bool) {
	del := strings.Contains(name, "Deleted") || strings.Contains(name, "Deregistered") || strings.Contains(name, "Removed")
	best, rank := 0, len(fixtureOrder)
	for i, p := range fixtureOrder {
		if strings.HasPrefix(name, p) && len(p) > best {
			best, rank = len(p), i
		}
	}
	return rank, del
}

// goldenFixtures returns every encoded event in events/testdata, in
// fixtureOrder, older versions of a type before newer ones.
func goldenFixtures(t *testing.T) []*events.Event {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("..", "..", "events", "testdata", "*.msgpack"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no golden fixtures in events/testdata (%v)", err)
	}
	sort.SliceStable(paths, func(i, j int) bool {
		ri, di := fixtureRank(filepath.Base(paths[i]))
		rj, dj := fixtureRank(filepath.Base(paths[j]))
		if di != dj {
			return !di
		}
		if ri != rj {
			return ri < rj
		}
		return paths[i] < paths[j]
	})
	var out []*events.Event
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		ev, err := events.DecodeEvent(b)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		out = append(out, ev)
	}
	return out
}

// current returns ev with its payload upcast to its type's current
// version, as a server of today would have written it.
func current(t *testing.T, ev *events.Event) *events.Event {
	t.Helper()
	p, err := events.Decode(ev)
	if err != nil {
		t.Fatalf("%s v%d: %v", ev.Type, ev.Version, err)
	}
	now, err := events.New(ev.ID, p)
	if err != nil {
		t.Fatal(err)
	}
	out := *ev
	out.Version, out.Payload, out.Keys = now.Version, now.Payload, now.Keys
	return &out
}

// applyFixtures applies one entry per event through a fresh FSM and
// returns the store.
func applyFixtures(t *testing.T, evs []*events.Event) *kv.Store {
	t.Helper()
	store := pt.OpenStore(t)
	f := pt.NewFSM(t, store)
	for i, ev := range evs {
		e := &events.Entry{Time: pt.LeaderTime + int64(i), CommandID: "fixture-" + ev.Type, Actor: "upgrade", Events: []events.Event{*ev}}
		if res := pt.ApplyOne(t, f, uint64(i+1), e); res.Err != nil {
			t.Fatalf("fixture %s v%d rejected: %v", ev.Type, ev.Version, res.Err)
		}
	}
	return store
}

// TestOldVersionArchiveReplays (issue 5, item 6): an archive holding every
// golden fixture, old event versions included (NamespaceUpserted v1),
// replays into today's projections through the upcasters: a rebuild from
// it, and the automatic rebuild a version change triggers on start, equal
// the projections of the same history written at today's versions.
func TestOldVersionArchiveReplays(t *testing.T) {
	fixtures := goldenFixtures(t)
	var old, upcast []*events.Event
	sawOld := false
	for _, ev := range fixtures {
		for _, typ := range events.Types() {
			if typ.Name == ev.Type && ev.Version < typ.Version {
				sawOld = true
			}
		}
		old = append(old, ev)
		upcast = append(upcast, current(t, ev))
	}
	if !sawOld {
		t.Fatal("no fixture of an old event version in events/testdata")
	}
	written := applyFixtures(t, old)  // an archive an older server wrote
	today := applyFixtures(t, upcast) // the same history at today's versions
	for _, ev := range pt.Archived(t, written) {
		if ev.Type == "NamespaceUpserted" && ev.Version == 1 {
			sawOld = false
		}
	}
	if sawOld {
		t.Fatal("the archive does not keep the v1 NamespaceUpserted as written")
	}

	want := pt.Checksums(t, today, allProjs())
	check := func(what string, r kv.Reader) {
		t.Helper()
		for name, sum := range pt.Checksums(t, r, allProjs()) {
			if w := want[name]; sum != w {
				t.Errorf("%s: projection %s has checksum %x, the history at today's versions %x", what, name, sum[:8], w[:8])
			}
		}
	}
	check("applied live", written)
	rebuilt, _ := rebuildFrom(t, written, 0)
	check("rebuilt from the archive", rebuilt)

	// The v1 namespace reads as today's shape.
	ns, err := namespaces.Get(projections.NewView(rebuilt), "legacy")
	if err != nil {
		t.Fatalf("legacy namespace: %v", err)
	}
	if ns.Description != "written before Meta" || ns.Meta != nil {
		t.Errorf("legacy namespace = %+v", ns)
	}

	// A new build whose projections all changed version rebuilds them
	// from that archive when it opens the store.
	var bumpedAll []projections.Projection
	for _, p := range all.Projections() {
		bumpedAll = append(bumpedAll, bumpedProj{p})
	}
	f, err := fsm.New(written, fsm.Config{Projections: bumpedAll, AllowStale: true, Logger: discard()})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if got := len(f.Stale()); got != len(bumpedAll) {
		t.Fatalf("%d stale projections, want %d", got, len(bumpedAll))
	}
	rb := fsm.NewRebuilder(f, fsm.RebuilderConfig{Logger: discard()})
	defer rb.Close()
	if err := rb.RebuildStale(t.Context()); err != nil {
		t.Fatal(err)
	}
	check("rebuilt on start after a version change", written)
}
