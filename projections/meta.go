package projections

import (
	"errors"
	"fmt"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/ordoplane/ordo/storage/kv"
)

// ErrRebuildNeeded is returned when the stored projections were written by
// another version of a projection (or lack one) and must be rebuilt from the
// archive before this build can serve them.
var ErrRebuildNeeded = errors.New("ordo: projections need a rebuild")

// Meta is the stored metadata of one projection.
type Meta struct {
	Name    string `msgpack:"n"`
	Version int    `msgpack:"v"`
}

// Stale is a projection whose stored rows this build cannot use: another
// version of it wrote them, or it is new to a store that already applied
// entries. It must be rebuilt from the archive before it serves or applies.
type Stale struct {
	Projection Projection
	// Stored is the version the store holds; 0 when it holds none.
	Stored int
}

func (s Stale) String() string {
	if s.Stored == 0 {
		return fmt.Sprintf("%s (missing, want v%d)", s.Projection.Name(), s.Projection.Version())
	}
	return fmt.Sprintf("%s (v%d, want v%d)", s.Projection.Name(), s.Stored, s.Projection.Version())
}

// CheckVersions verifies that the stored projections match projs, writing
// metadata into a store that has applied nothing yet. A mismatch is
// ErrRebuildNeeded, naming the stale projections.
func CheckVersions(v View, projs []Projection) error {
	stale, err := staleProjections(v, projs)
	if err != nil {
		return err
	}
	if len(stale) > 0 {
		names := make([]string, len(stale))
		for i, s := range stale {
			names[i] = s.String()
		}
		return fmt.Errorf("%w: %v", ErrRebuildNeeded, names)
	}
	return nil
}

// staleProjections returns the projections of projs whose stored version
// differs from the code's or is missing, in projs order. A store that has
// applied nothing takes the code's versions (written when v reads through a
// writer).
func staleProjections(v View, projs []Projection) ([]Stale, error) {
	applied, err := v.AppliedIndex()
	if err != nil {
		return nil, err
	}
	var stale []Stale
	for _, p := range projs {
		m, ok, err := readMeta(v.r, p.Name())
		if err != nil {
			return nil, err
		}
		switch {
		case !ok && applied == 0:
			w, canWrite := v.r.(kv.Writer)
			if !canWrite {
				continue
			}
			if err := writeMeta(w, p); err != nil {
				return nil, err
			}
		case !ok:
			stale = append(stale, Stale{Projection: p})
		case m.Version != p.Version():
			stale = append(stale, Stale{Projection: p, Stored: m.Version})
		}
	}
	return stale, nil
}

// StoredVersion returns the version of projection name that r holds, 0 when
// it holds none.
func StoredVersion(r kv.Reader, name string) (int, error) {
	m, _, err := readMeta(r, name)
	return m.Version, err
}

func readMeta(r kv.Reader, name string) (Meta, bool, error) {
	b, err := r.Get(projectionMetaKey(name))
	if errors.Is(err, kv.ErrNotFound) {
		return Meta{}, false, nil
	}
	if err != nil {
		return Meta{}, false, err
	}
	var m Meta
	if err := msgpack.Unmarshal(b, &m); err != nil {
		return Meta{}, false, fmt.Errorf("projection meta %s: %w", name, err)
	}
	return m, true, nil
}

// setter is the write half of kv.Writer, which kv.WriteBatch also has.
type setter interface {
	Set(key, value []byte) error
}

func writeMeta(w setter, p Projection) error {
	b, err := msgpack.Marshal(&Meta{Name: p.Name(), Version: p.Version()})
	if err != nil {
		return err
	}
	return w.Set(projectionMetaKey(p.Name()), b)
}

// rebuildMarker is stored at markerKey(name) while an operator's rebuild of
// the projection runs: a server that stops before the switch finds it on
// start (its half-built scratch store deleted by then) and runs the
// rebuild again. A
// rebuild for a version change needs no marker: the stored version still
// differs after a crash.
type rebuildMarker struct {
	Requested uint64 `msgpack:"a"` // the applied index when it was requested
}

func markerKey(name string) []byte { return append([]byte(markerPrefix), name...) }

// markerPrefix starts every rebuild marker; markers are local to a server
// and never travel in a raft snapshot.
const markerPrefix = "rb/"

func writeMarker(w setter, name string, m rebuildMarker) error {
	b, err := msgpack.Marshal(&m)
	if err != nil {
		return err
	}
	return w.Set(markerKey(name), b)
}

// pendingRebuilds returns the names of the projections with a rebuild
// marker, in key order.
func pendingRebuilds(r kv.Reader) ([]string, error) {
	var names []string
	lower := []byte(markerPrefix)
	err := r.Scan(lower, kv.PrefixEnd(lower), false, func(k, _ []byte) error {
		names = append(names, string(k[len(lower):]))
		return nil
	})
	return names, err
}
