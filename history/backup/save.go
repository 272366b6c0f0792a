package backup

import (
	"errors"
	"fmt"
	"io"

	"github.com/ordoplane/ordo/clock"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/history/export"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/fsm"
	"github.com/ordoplane/ordo/storage/archive"
	"github.com/ordoplane/ordo/storage/kv"
	"github.com/ordoplane/ordo/storage/snapshots"
)

// SaveOptions describe the saving server.
type SaveOptions struct {
	// Server is the saving server's node id; Version its ordo version.
	Server, Version string
	// Projections are the projections the state holds, whose stored
	// versions the header lists.
	Projections []projections.Projection
	// Clock is the clock the header's Created time is read from; nil
	// leaves Created unset.
	Clock clock.Clock
}

// Save writes the state src holds (a consistent snapshot of a state
// store) to w as a snapshot file and returns its header.
func Save(w io.Writer, src kv.Reader, opts SaveOptions) (snapshots.Header, error) {
	h, err := header(src, opts)
	if err != nil {
		return h, err
	}
	sw, err := snapshots.NewWriter(w, h)
	if err != nil {
		return h, err
	}
	if err := fsm.SavedRows(src, sw.Row); err != nil {
		return h, fmt.Errorf("save snapshot: %w", err)
	}
	return h, sw.Close()
}

// header describes the state src holds.
func header(src kv.Reader, opts SaveOptions) (snapshots.Header, error) {
	h := snapshots.Header{Server: opts.Server, OrdoVersion: opts.Version, Projections: map[string]int{}}
	if opts.Clock != nil {
		h.Created = opts.Clock.Now().UTC()
	}
	var err error
	if h.Index, err = projections.NewView(src).AppliedIndex(); err != nil {
		return h, fmt.Errorf("save snapshot: %w", err)
	}
	if h.ClusterID, err = export.ClusterID(src); err != nil {
		return h, fmt.Errorf("save snapshot: %w", err)
	}
	if h.LastTime, err = lastTime(src); err != nil {
		return h, fmt.Errorf("save snapshot: %w", err)
	}
	for _, p := range opts.Projections {
		v, err := projections.StoredVersion(src, p.Name())
		if err != nil {
			return h, fmt.Errorf("save snapshot: version of %s: %w", p.Name(), err)
		}
		h.Projections[p.Name()] = v
	}
	return h, nil
}

// lastTime returns the leader time of the archive's last entry, 0 when
// it holds none.
func lastTime(src kv.Reader) (int64, error) {
	last, err := archive.Last(src)
	if err != nil || last == 0 {
		return 0, err
	}
	var t int64
	err = archive.Scan(src, last, last, func(index uint64, seq uint32, data []byte) error {
		ev, err := events.DecodeEvent(data)
		if err != nil {
			return fmt.Errorf("archive %d/%d: %w", index, seq, err)
		}
		t = ev.Time
		return kv.ErrStop
	})
	if err != nil && !errors.Is(err, kv.ErrStop) {
		return 0, err
	}
	return t, nil
}
