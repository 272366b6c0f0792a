package fsm

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/storage/kv"
)

// ErrDowngrade is wrapped by the error of an FSM that refuses a state
// store (New) or a snapshot (Restore, CheckSavedRow) written by a newer
// ordo than this build: one whose event types or projection versions this
// build does not have (a *DowngradeError says which).
var ErrDowngrade = errors.New("ordo: data written by a newer ordo than this build")

// writtenByKey holds the state store's writtenBy record. It travels with
// the store's other rows in raft snapshots and snapshot files, so a store
// installed from a snapshot is known to be as new as the server that
// saved it.
var writtenByKey = []byte("meta/written-by")

// writtenBy records the newest ordo that has written a state store: every
// event type it registers at its current version, and the version of
// every projection it maintains. It is only ever raised: a build that
// opens the store merges its own registry and projections into it (the
// higher version of each wins, see raise), and names itself as Version
// when that raised anything.
type writtenBy struct {
	// Version is the ordo version whose open last raised the record: the
	// oldest ordo that has everything the record holds.
	Version string `msgpack:"v"`
	// Types maps each event type to the newest version of it written.
	Types map[string]uint16 `msgpack:"t"`
	// Projections maps each projection to the newest version of it
	// written.
	Projections map[string]int `msgpack:"p"`
}

// build is what this binary reads and writes: its version, its event
// registry and its projections' versions.
type build struct {
	version     string
	types       map[string]uint16
	projections map[string]int
}

// newBuild describes the build configured by cfg: the event types are
// cfg.EventTypes, or the registry's when nil.
func newBuild(cfg Config) build {
	b := build{version: cfg.Version, types: map[string]uint16{}, projections: map[string]int{}}
	if b.version == "" {
		b.version = "(unnamed build)"
	}
	types := cfg.EventTypes
	if types == nil {
		types = events.Types()
	}
	for _, t := range types {
		b.types[t.Name] = t.Version
	}
	for _, p := range cfg.Projections {
		b.projections[p.Name()] = p.Version()
	}
	return b
}

// Difference is one thing a store holds that a build does not: an event
// type it lacks or knows only at an older version, or a projection it
// maintains at an older version.
type Difference struct {
	// Kind is "event type" or "projection".
	Kind string
	// Name is the event type or projection.
	Name string
	// Stored is the version the store records; Known the build's (0: the
	// build lacks the event type).
	Stored, Known int
}

func (d Difference) String() string {
	if d.Known == 0 {
		return fmt.Sprintf("%s %s v%d, which it does not know", d.Kind, d.Name, d.Stored)
	}
	return fmt.Sprintf("%s %s v%d, which it knows only at v%d", d.Kind, d.Name, d.Stored, d.Known)
}

// DowngradeError is a store or snapshot written by a newer ordo than this
// build. It wraps ErrDowngrade.
type DowngradeError struct {
	// What is refused: "data directory" or "snapshot".
	What string
	// StoreVersion is the ordo that wrote the newest of what the store
	// holds; BuildVersion this build's.
	StoreVersion, BuildVersion string
	// Differences are what the store holds that this build lacks, event
	// types first, then projections, each sorted by name.
	Differences []Difference
}

func (e *DowngradeError) Error() string {
	var more string
	if n := len(e.Differences) - 1; n > 0 {
		more = fmt.Sprintf(" (and %d more: %s)", n, joinDiffs(e.Differences[1:]))
	}
	return fmt.Sprintf("%s was written by ordo %s, newer than this build (ordo %s): it holds %s%s; "+
		"run ordo %s or newer on it, or restore a snapshot taken by ordo %s into an empty data directory",
		e.What, e.StoreVersion, e.BuildVersion, e.Differences[0], more, e.StoreVersion, e.BuildVersion)
}

func joinDiffs(ds []Difference) string {
	const max = 5
	names := make([]string, 0, max+1)
	for i, d := range ds {
		if i == max {
			names = append(names, "…")
			break
		}
		names = append(names, fmt.Sprintf("%s %s v%d", d.Kind, d.Name, d.Stored))
	}
	return strings.Join(names, ", ")
}

// Unwrap makes a DowngradeError an ErrDowngrade.
func (e *DowngradeError) Unwrap() error { return ErrDowngrade }

// check returns the DowngradeError of a store whose record is w, opened
// by b; nil when b has everything w records. A projection b does not
// maintain is no obstacle (b never reads it); an event type it lacks is,
// since the archive may hold events of it.
func (w writtenBy) check(b build, what string) error {
	var diffs []Difference
	for _, name := range namesOf(w.Types) {
		if known := b.types[name]; known < w.Types[name] {
			diffs = append(diffs, Difference{Kind: "event type", Name: name, Stored: int(w.Types[name]), Known: int(known)})
		}
	}
	for _, name := range namesOf(w.Projections) {
		if known, ok := b.projections[name]; ok && known < w.Projections[name] {
			diffs = append(diffs, Difference{Kind: "projection", Name: name, Stored: w.Projections[name], Known: known})
		}
	}
	if len(diffs) == 0 {
		return nil
	}
	return &DowngradeError{What: what, StoreVersion: w.Version, BuildVersion: b.version, Differences: diffs}
}

// raise merges b into w: each event type and projection at the higher of
// the two versions. It reports whether that changed anything, and then
// names b's version.
func (w writtenBy) raise(b build) (writtenBy, bool) {
	out := writtenBy{Version: w.Version, Types: map[string]uint16{}, Projections: map[string]int{}}
	for k, v := range w.Types {
		out.Types[k] = v
	}
	for k, v := range w.Projections {
		out.Projections[k] = v
	}
	changed := false
	for k, v := range b.types {
		if have, ok := out.Types[k]; !ok || have < v {
			out.Types[k], changed = v, true
		}
	}
	for k, v := range b.projections {
		if have, ok := out.Projections[k]; !ok || have < v {
			out.Projections[k], changed = v, true
		}
	}
	if changed {
		out.Version = b.version
	}
	return out, changed
}

func namesOf[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// readWrittenBy returns the record r holds; ok is false when it holds
// none (a store no ordo with the record has opened).
func readWrittenBy(r kv.Reader) (w writtenBy, ok bool, err error) {
	b, err := r.Get(writtenByKey)
	if errors.Is(err, kv.ErrNotFound) {
		return writtenBy{}, false, nil
	}
	if err != nil {
		return writtenBy{}, false, fmt.Errorf("read %s: %w", writtenByKey, err)
	}
	if w, err = decodeWrittenBy(b); err != nil {
		return writtenBy{}, false, err
	}
	return w, true, nil
}

func decodeWrittenBy(b []byte) (writtenBy, error) {
	var w writtenBy
	if err := events.Unmarshal(b, &w); err != nil {
		return writtenBy{}, fmt.Errorf("decode %s: %w", writtenByKey, err)
	}
	return w, nil
}

// claim is what opening a store does to its record: was is what the
// store held, now what this build raises it to.
type claim struct {
	was, now writtenBy
	changed  bool
}

// checkClaim checks that this build may write the FSM's store, and
// returns the record raised to this build for writeClaim. A store written
// by a newer ordo is refused with a *DowngradeError.
func (f *FSM) checkClaim() (claim, error) {
	w, _, err := readWrittenBy(f.store)
	if err != nil {
		return claim{}, err
	}
	if err := w.check(f.compat.build, "data directory"); err != nil {
		return claim{}, err
	}
	now, changed := w.raise(f.compat.build)
	return claim{was: w, now: now, changed: changed}, nil
}

// writeClaim writes c's raised record, synced, once the store has been
// found usable (its projections current, or AllowStale), before anything
// else this build writes to it.
func (f *FSM) writeClaim(c claim) error {
	if !c.changed {
		return nil
	}
	b, err := events.Marshal(&c.now)
	if err != nil {
		return fmt.Errorf("encode %s: %w", writtenByKey, err)
	}
	wb := f.store.WriteBatch()
	if err := wb.Set(writtenByKey, b); err != nil {
		wb.Close()
		return err
	}
	if err := wb.Commit(true); err != nil {
		return fmt.Errorf("write %s: %w", writtenByKey, err)
	}
	f.log.Info("data directory records this build as its newest writer", "version", c.now.Version, "was", c.was.Version)
	return nil
}

// CheckSavedRow checks one row of a saved state (a snapshot file's, in
// SavedRows order) before it is restored: the record of the ordo that
// wrote it must not be newer than this build. It returns a
// *DowngradeError for a newer one, nil for any other row.
func (f *FSM) CheckSavedRow(k, v []byte) error {
	if string(k) != string(writtenByKey) {
		return nil
	}
	w, err := decodeWrittenBy(v)
	if err != nil {
		return err
	}
	return w.check(f.compat.build, "snapshot")
}

// WrittenBy is the record of the newest ordo that has written a state
// store, as WrittenByOf reads it.
type WrittenBy struct {
	// Version is the ordo whose open last raised the record.
	Version string
	// EventTypes and Projections map each name to its newest version
	// written.
	EventTypes  map[string]uint16
	Projections map[string]int
}

// WrittenByOf returns the record r holds; ok is false when none does (a
// store no ordo that keeps it has opened).
func WrittenByOf(r kv.Reader) (WrittenBy, bool, error) {
	w, ok, err := readWrittenBy(r)
	return WrittenBy{Version: w.Version, EventTypes: w.Types, Projections: w.Projections}, ok, err
}
