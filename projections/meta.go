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

// CheckVersions verifies that the stored projections match projs, writing
// metadata into a store that has applied nothing yet.
func CheckVersions(v View, projs []Projection) error {
	applied, err := v.AppliedIndex()
	if err != nil {
		return err
	}
	var stale []string
	for _, p := range projs {
		m, ok, err := readMeta(v.r, p.Name())
		if err != nil {
			return err
		}
		switch {
		case !ok && applied == 0:
			w, canWrite := v.r.(kv.Writer)
			if !canWrite {
				continue
			}
			if err := writeMeta(w, p); err != nil {
				return err
			}
		case !ok:
			stale = append(stale, fmt.Sprintf("%s (missing, want v%d)", p.Name(), p.Version()))
		case m.Version != p.Version():
			stale = append(stale, fmt.Sprintf("%s (v%d, want v%d)", p.Name(), m.Version, p.Version()))
		}
	}
	if len(stale) > 0 {
		return fmt.Errorf("%w: %v", ErrRebuildNeeded, stale)
	}
	return nil
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

func writeMeta(w kv.Writer, p Projection) error {
	b, err := msgpack.Marshal(&Meta{Name: p.Name(), Version: p.Version()})
	if err != nil {
		return err
	}
	return w.Set(projectionMetaKey(p.Name()), b)
}
