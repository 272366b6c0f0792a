package fsm_test

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/all"
	"github.com/ordoplane/ordo/projections/fsm"
	"github.com/ordoplane/ordo/projections/namespaces"
	pt "github.com/ordoplane/ordo/projections/projectionstest"
	"github.com/ordoplane/ordo/storage/kv"
	"github.com/ordoplane/ordo/storage/raftlog"
	"github.com/ordoplane/ordo/storage/waittest"
)

// buildOf describes a build for openAs: its version, registry and
// projections.
type buildOf struct {
	version string
	types   []events.Type
	projs   []projections.Projection
}

// thisBuild is this build, named version.
func thisBuild(version string) buildOf {
	return buildOf{version: version, types: events.Types(), projs: all.Projections()}
}

// withType returns b's registry with type name at version v (0: without
// it), as an older or newer build has it.
func (b buildOf) withType(name string, v uint16) buildOf {
	var types []events.Type
	for _, t := range b.types {
		if t.Name == name {
			if v == 0 {
				continue
			}
			t.Version = v
		}
		types = append(types, t)
	}
	b.types = types
	return b
}

// atVersion is a projection at another version than its code's.
type atVersion struct {
	projections.Projection
	version int
}

func (p atVersion) Version() int { return p.version }

// withProjection returns b with projection name at version v.
func (b buildOf) withProjection(name string, v int) buildOf {
	var projs []projections.Projection
	for _, p := range b.projs {
		if p.Name() == name {
			p = atVersion{p, v}
		}
		projs = append(projs, p)
	}
	b.projs = projs
	return b
}

func openAs(store *kv.Store, b buildOf, reg prometheus.Registerer) (*fsm.FSM, error) {
	return fsm.New(store, fsm.Config{Projections: b.projs, Version: b.version, EventTypes: b.types,
		AllowStale: true, Registerer: reg, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
}

// writeAs opens store as b, applies one entry and closes the FSM.
func writeAs(t *testing.T, store *kv.Store, b buildOf) {
	t.Helper()
	f, err := openAs(store, b, nil)
	if err != nil {
		t.Fatalf("open as ordo %s: %v", b.version, err)
	}
	if len(f.Stale()) > 0 { // an upgrade: rebuild, as the agent does
		r := fsm.NewRebuilder(f, fsm.RebuilderConfig{ScratchDir: t.TempDir()})
		if err := r.RebuildStale(t.Context()); err != nil {
			t.Fatal(err)
		}
		r.Close()
	}
	index := f.Applied() + 1
	if res := pt.ApplyOne(t, f, index, pt.Entry(t, "", upsert(b.version))); res.Err != nil {
		t.Fatal(res.Err)
	}
	f.Close()
}

// TestOlderBuildIsRefused: a data directory written by this build is
// refused by a build with an older registry (a type it lacks, or knows
// only at an older version) or an older projection version, with an
// error naming both versions and what differs; nothing is written then.
func TestOlderBuildIsRefused(t *testing.T) {
	nsVersion := namespaces.Projection{}.Version()
	ns, _ := events.Lookup("NamespaceUpserted")
	cases := []struct {
		name        string
		newer       buildOf
		older       buildOf
		wantMessage []string
	}{
		{name: "event type unknown", newer: thisBuild("0.2.0"), older: thisBuild("0.1.0").withType("ComponentRegistered", 0),
			wantMessage: []string{"ordo 0.2.0", "ordo 0.1.0", "event type ComponentRegistered v1, which it does not know"}},
		{name: "event type older", newer: thisBuild("0.2.0").withType("NamespaceUpserted", ns.Version+1), older: thisBuild("0.1.0"),
			wantMessage: []string{"ordo 0.2.0", "ordo 0.1.0", "event type NamespaceUpserted v" + strconv.Itoa(int(ns.Version)+1) + ", which it knows only at v" + strconv.Itoa(int(ns.Version))}},
		{name: "projection older", newer: thisBuild("0.2.0").withProjection("namespaces", nsVersion+1), older: thisBuild("0.1.0"),
			wantMessage: []string{"ordo 0.2.0", "ordo 0.1.0", "projection namespaces v" + strconv.Itoa(nsVersion+1) + ", which it knows only at v" + strconv.Itoa(nsVersion)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			store := pt.OpenStore(t)
			writeAs(t, store, c.older) // upgrades work: the older build wrote first
			writeAs(t, store, c.newer)
			applied := pt.AppliedIndex(t, store)
			_, err := openAs(store, c.older, nil)
			var de *fsm.DowngradeError
			if !errors.Is(err, fsm.ErrDowngrade) || !errors.As(err, &de) {
				t.Fatalf("older build opened a newer directory: %v", err)
			}
			for _, w := range c.wantMessage {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			rec, ok, rerr := fsm.WrittenByOf(store)
			if rerr != nil || !ok || rec.Version != "0.2.0" {
				t.Fatalf("record after the refusal: %+v %v %v", rec, ok, rerr)
			}
			if got := pt.AppliedIndex(t, store); got != applied {
				t.Fatalf("applied index moved from %d to %d", applied, got)
			}
			// The newer build still opens it, and finds nothing stale.
			f, err := openAs(store, c.newer, nil)
			if err != nil {
				t.Fatalf("newer build reopening: %v", err)
			}
			if s := f.Stale(); len(s) != 0 {
				t.Fatalf("stale after the refusal: %v", s)
			}
			f.Close()
		})
	}
}

// TestRecordIsOnlyRaised: a build that adds nothing leaves the record as
// it is, a newer one raises it, and a build without a projection the
// record names (a newer build that dropped it) still opens the store.
func TestRecordIsOnlyRaised(t *testing.T) {
	store := pt.OpenStore(t)
	writeAs(t, store, thisBuild("0.1.0").withType("ComponentRegistered", 0))
	writeAs(t, store, thisBuild("0.2.0"))
	writeAs(t, store, thisBuild("0.2.1")) // the same registry and projections
	rec, ok, err := fsm.WrittenByOf(store)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	if rec.Version != "0.2.0" || rec.EventTypes["ComponentRegistered"] == 0 || rec.Projections["namespaces"] == 0 {
		t.Fatalf("record %+v", rec)
	}
	dropped := thisBuild("0.3.0")
	dropped.projs = dropped.projs[1:] // no namespaces projection
	f, err := openAs(store, dropped, nil)
	if err != nil {
		t.Fatalf("a build without a recorded projection: %v", err)
	}
	f.Close()
}

// TestNewerSnapshotHaltsRestore: a raft snapshot a newer build took
// carries its record; an older build refuses to install it and halts,
// and a snapshot file's rows are refused before any restore
// (CheckSavedRow).
func TestNewerSnapshotHaltsRestore(t *testing.T) {
	newer := thisBuild("0.2.0").withType("NamespaceUpserted", 99)
	src := pt.OpenStore(t)
	writeAs(t, src, newer)
	fs, err := openAs(src, newer, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer fs.Close()
	data := persist(t, fs)

	reg := prometheus.NewRegistry()
	fd, err := openAs(pt.OpenStore(t), thisBuild("0.1.0"), reg)
	if err != nil {
		t.Fatal(err)
	}
	defer fd.Close()
	err = fd.Restore(bytes.NewReader(data))
	if !errors.Is(err, fsm.ErrHalted) || !errors.Is(err, fsm.ErrDowngrade) {
		t.Fatalf("restore of a newer snapshot: %v", err)
	}
	if h := fd.Halt(); h == nil || !strings.Contains(h.Error(), "ordo 0.2.0") || !strings.Contains(h.Error(), "ordo 0.1.0") {
		t.Fatalf("halt %v", h)
	}
	if !closed(fd.Halted()) || gathered(t, reg, "ordo_fsm_halted") != 1 {
		t.Fatal("halt not reported")
	}
	if _, err := fd.Snapshot(); !errors.Is(err, fsm.ErrHalted) {
		t.Fatalf("snapshot of a halted FSM: %v", err)
	}

	var refused error
	_ = fsm.SavedRows(src, func(k, v []byte) error {
		if err := fd.CheckSavedRow(k, v); err != nil && refused == nil {
			refused = err
		}
		return nil
	})
	if !errors.Is(refused, fsm.ErrDowngrade) || !strings.Contains(refused.Error(), "snapshot was written by ordo 0.2.0") {
		t.Fatalf("saved rows of a newer build: %v", refused)
	}
	if err := fsm.SavedRows(src, fs.CheckSavedRow); err != nil {
		t.Fatalf("the build that saved them refuses them: %v", err)
	}
}

// TestUnknownEventHaltsApply: an entry holding an event type this build
// does not know, or a newer version of one it knows, halts the FSM: what
// came before it in the batch is applied, it and everything after is
// not, every later Apply answers the halt, and the halt is reported.
func TestUnknownEventHaltsApply(t *testing.T) {
	for _, c := range []struct {
		name  string
		ev    events.Event
		want  error
		group bool
	}{
		{"unknown type", events.Event{Type: "ComponentTeleported", Version: 1, ID: "x", Payload: []byte{0x80}}, events.ErrUnknownType, false},
		{"newer version", events.Event{Type: "NamespaceUpserted", Version: 999, ID: "x", Payload: []byte{0x80}}, events.ErrFutureVersion, false},
		{"unknown precondition", events.Event{}, fsm.ErrUnknownPrecondition, false},
		// A grouped entry halts whole: its first command, known, does not apply either.
		{"unknown type in a group", events.Event{Type: "ComponentTeleported", Version: 1, ID: "x", Payload: []byte{0x80}}, events.ErrUnknownType, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			store := pt.OpenStore(t)
			reg := prometheus.NewRegistry()
			f, err := openAs(store, thisBuild("0.1.0"), reg)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			pt.ApplyOne(t, f, 1, pt.Entry(t, "", upsert("before")))
			future := pt.Entry(t, "future")
			future.Events = []events.Event{c.ev}
			if c.ev.Type == "" {
				future = pt.Entry(t, "future", upsert("future"))
				future.Preconditions = []events.Precondition{{Table: namespaces.Table, Key: "x", Op: "newer-than-this-build"}}
			}
			if c.group {
				g := events.NewGroup(future.Time, []events.Entry{*pt.Entry(t, "known", upsert("grouped")), *future})
				future = &g
			}
			res := pt.Apply(t, f, pt.Log(t, 2, pt.Entry(t, "", upsert("same-batch"))), pt.Log(t, 3, future),
				pt.Log(t, 4, pt.Entry(t, "", upsert("after"))))
			if res[0].Err != nil {
				t.Fatalf("entry before the unknown one: %v", res[0].Err)
			}
			for _, r := range res[1:] {
				if !errors.Is(r.Err, fsm.ErrHalted) || !errors.Is(r.Err, c.want) {
					t.Fatalf("result %+v, want a halt wrapping %v", r, c.want)
				}
			}
			if f.Applied() != 2 || pt.AppliedIndex(t, store) != 2 || pt.ArchiveLen(t, store) != 2 {
				t.Fatalf("applied %d (stored %d), archive %d: want 2, 2, 2", f.Applied(), pt.AppliedIndex(t, store), pt.ArchiveLen(t, store))
			}
			if _, ok := getNS(t, store, "after"); ok {
				t.Fatal("an entry after the halt applied")
			}
			if _, ok := getNS(t, store, "grouped"); ok {
				t.Fatal("a command of the halted group applied")
			}
			h := f.Halt()
			if h == nil || h.Index != 3 || !errors.Is(h, c.want) || !strings.Contains(h.Error(), "ordo 0.1.0") {
				t.Fatalf("halt %v", h)
			}
			if !closed(f.Halted()) || gathered(t, reg, "ordo_fsm_halted") != 1 {
				t.Fatal("halt not reported")
			}
			// Nothing applies any more, and nothing is recorded as rejected.
			if r := pt.ApplyOne(t, f, 5, pt.Entry(t, "", upsert("later"))); !errors.Is(r.Err, fsm.ErrHalted) {
				t.Fatalf("apply after the halt: %+v", r)
			}
			if _, err := f.Snapshot(); !errors.Is(err, fsm.ErrHalted) {
				t.Fatalf("snapshot after the halt: %v", err)
			}
			if f.Applied() != 2 {
				t.Fatalf("applied %d after the halt", f.Applied())
			}
			// A restart of the same build stops at the same entry: it was
			// neither applied nor rejected, and a newer build applies it.
			f.Close()
			f2, err := openAs(store, thisBuild("0.1.0"), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer f2.Close()
			res = pt.Apply(t, f2, pt.Log(t, 3, future))
			if !errors.Is(res[0].Err, fsm.ErrHalted) || f2.Applied() != 2 {
				t.Fatalf("after a restart: %+v, applied %d", res[0], f2.Applied())
			}
		})
	}
}

// TestHaltThroughRaft appends an entry holding an unknown event type
// through a real raft node: apply halts there and nothing after it
// applies.
func TestHaltThroughRaft(t *testing.T) {
	store := pt.OpenStore(t)
	f, err := openAs(store, thisBuild("0.1.0"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cfg := raftlog.DefaultConfig()
	cfg.ID, cfg.BindAddr, cfg.Dir, cfg.Bootstrap, cfg.NoSync = "s1", "127.0.0.1:0", t.TempDir(), true, true
	// A single node elects itself after a heartbeat timeout: 100 ms, not 1 s.
	cfg.HeartbeatTimeout, cfg.ElectionTimeout, cfg.LeaderLeaseTimeout = 100*time.Millisecond, 100*time.Millisecond, 50*time.Millisecond
	node, err := raftlog.Open(cfg, f)
	if err != nil {
		t.Fatal(err)
	}
	defer node.Shutdown()
	appendEntry := func(e *events.Entry) (any, uint64, error) {
		data, err := events.EncodeEntry(e)
		if err != nil {
			t.Fatal(err)
		}
		var res any
		var index uint64
		waittest.For(t, 30*time.Second, "the node elected to take an entry", func() bool {
			res, index, err = node.Append(t.Context(), data)
			return !errors.Is(err, raftlog.ErrNotLeader)
		})
		return res, index, err
	}
	if _, _, err := appendEntry(pt.Entry(t, "", upsert("before"))); err != nil {
		t.Fatal(err)
	}
	before := f.Applied()
	future := pt.Entry(t, "future")
	future.Events = []events.Event{{Type: "ComponentTeleported", Version: 1, ID: "x", Payload: []byte{0x80}}}
	res, index, err := appendEntry(future)
	if err != nil {
		t.Fatal(err)
	}
	if r, ok := res.(fsm.Result); !ok || !errors.Is(r.Err, events.ErrUnknownType) {
		t.Fatalf("answer to the unknown entry: %#v", res)
	}
	if h := f.Halt(); h == nil || h.Index != index {
		t.Fatalf("halt %v, want at index %d", h, index)
	}
	res, _, err = appendEntry(pt.Entry(t, "", upsert("after")))
	if r, ok := res.(fsm.Result); err == nil && (!ok || !errors.Is(r.Err, fsm.ErrHalted)) {
		t.Fatalf("answer to the entry after: %#v", res)
	}
	if f.Applied() != before || pt.AppliedIndex(t, store) != before {
		t.Fatalf("applied %d, stored %d, want %d", f.Applied(), pt.AppliedIndex(t, store), before)
	}
	if _, ok := getNS(t, store, "after"); ok {
		t.Fatal("an entry after the halt applied")
	}
	if err := node.TakeSnapshot(); err == nil {
		t.Fatal("raft took a snapshot past the halted entry")
	}
}
