package projections

import (
	"errors"
	"fmt"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/ordoplane/ordo/projections/internal/layout"
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
	stale, err := StaleProjections(v, projs)
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

// StaleProjections returns the projections of projs whose stored version
// differs from the code's or is missing, in projs order. A store that has
// applied nothing takes the code's versions (written when v reads through a
// writer).
func StaleProjections(v View, projs []Projection) ([]Stale, error) {
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
			if err := WriteMeta(w, p); err != nil {
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
	b, err := r.Get(layout.MetaKey(name))
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

// WriteMeta records p's name and version as the stored ones, through w (a
// kv.Writer or a kv.WriteBatch): the FSM does on a store that has applied
// nothing, a rebuild as it switches.
func WriteMeta(w interface{ Set(key, value []byte) error }, p Projection) error {
	b, err := msgpack.Marshal(&Meta{Name: p.Name(), Version: p.Version()})
	if err != nil {
		return err
	}
	return w.Set(layout.MetaKey(p.Name()), b)
}
