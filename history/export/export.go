package export

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/all"
	"github.com/ordoplane/ordo/projections/rebuild"
	"github.com/ordoplane/ordo/storage/archive"
	"github.com/ordoplane/ordo/storage/kv"
)

// ErrNoEvents is returned by Export when the archive holds no event in
// the range asked for.
var ErrNoEvents = errors.New("ordo: export: no events in the range")

// Options says what Export writes.
type Options struct {
	// From and To bound the raft indexes exported; From 0 is 1, To 0 is
	// the end of the archive.
	From, To uint64
	// ClusterID, ClusterIDSource and Server fill the header; an empty
	// ClusterID is found with ClusterID (falling back to Server).
	ClusterID, ClusterIDSource, Server string
	// OrdoVersion fills the header.
	OrdoVersion string
	// Created fills the header; the caller's clock.
	Created time.Time
	// State, when From > 1, starts the file with every projection as it
	// stood at From-1, rebuilt from the archive into a scratch store under
	// ScratchDir (the system temp dir when empty) — a rebuild of the
	// archive's prefix — so a replay of the slice shows the whole cluster.
	// Without it a replay of a slice that starts after 1 shows only what
	// the slice's events build on an empty state.
	State      bool
	ScratchDir string
	// Projections rebuild the base state; default all.Projections().
	Projections []projections.Projection
}

// Export writes the archive's events in [From, To] held by src — a
// snapshot, so the two passes it makes see the same log — to w as a
// history file, and returns the header it wrote.
func Export(w io.Writer, src kv.Reader, opts Options) (Header, error) {
	if opts.From == 0 {
		opts.From = 1
	}
	if opts.To != 0 && opts.To < opts.From {
		return Header{}, fmt.Errorf("export: range [%d, %d] is empty", opts.From, opts.To)
	}
	h := Header{From: opts.From, To: opts.To, Server: opts.Server, OrdoVersion: opts.OrdoVersion,
		Created: opts.Created.UTC(), ClusterID: opts.ClusterID, ClusterIDSource: opts.ClusterIDSource}
	if h.ClusterID == "" {
		id, err := ClusterID(src)
		if err != nil {
			return h, err
		}
		h.ClusterID, h.ClusterIDSource = id, ClusterFirstServer
		if id == "" {
			h.ClusterID, h.ClusterIDSource = opts.Server, ClusterExportingServer
		}
	}
	// First pass: the counts the header carries.
	err := archive.Scan(src, opts.From, opts.To, func(index uint64, _ uint32, _ []byte) error {
		if h.Events == 0 {
			h.FirstIndex = index
		}
		h.LastIndex = index
		h.Events++
		return nil
	})
	if err != nil {
		return h, fmt.Errorf("export: %w", err)
	}
	if h.Events == 0 {
		last, err := archive.Last(src)
		if err != nil {
			return h, err
		}
		return h, fmt.Errorf("%w [%d, %s] (the archive's last index is %d)", ErrNoEvents, opts.From, toString(opts.To), last)
	}
	var base *kv.Store
	if opts.State && opts.From > 1 {
		store, cleanup, err := rebuildBase(src, opts)
		if err != nil {
			return h, err
		}
		defer cleanup()
		base = store
		h.StateIndex = opts.From - 1
		if err := base.Scan(nil, nil, false, func(_, _ []byte) error { h.StateRows++; return nil }); err != nil {
			return h, fmt.Errorf("export: base state: %w", err)
		}
	}
	wr, err := NewWriter(w, h)
	if err != nil {
		return h, err
	}
	if base != nil {
		if err := base.Scan(nil, nil, false, wr.WriteState); err != nil {
			return h, fmt.Errorf("export: base state: %w", err)
		}
	}
	if err := archive.Scan(src, opts.From, opts.To, wr.WriteEvent); err != nil {
		return h, fmt.Errorf("export: %w", err)
	}
	return h, wr.Close()
}

func toString(to uint64) string {
	if to == 0 {
		return "end"
	}
	return fmt.Sprint(to)
}

// rebuildBase rebuilds every projection up to From-1 into a scratch store.
func rebuildBase(src kv.Reader, opts Options) (*kv.Store, func(), error) {
	dir, err := os.MkdirTemp(opts.ScratchDir, "export-state-")
	if err != nil {
		return nil, nil, fmt.Errorf("export: base state: %w", err)
	}
	store, err := kv.Open(dir, kv.DefaultConfig())
	if err != nil {
		os.RemoveAll(dir)
		return nil, nil, fmt.Errorf("export: base state: %w", err)
	}
	cleanup := func() {
		store.Close()
		os.RemoveAll(dir)
	}
	projs := opts.Projections
	if projs == nil {
		projs = all.Projections()
	}
	if _, err := rebuild.Rebuild(src, store, projs, opts.From-1, nil); err != nil {
		cleanup()
		return nil, nil, fmt.Errorf("export: base state at %d: %w", opts.From-1, err)
	}
	return store, cleanup, nil
}

// clusterScanLimit bounds how many events ClusterID reads looking for the
// first registered server: the bootstrap leader registers itself within
// its first entries.
const clusterScanLimit = 10000

// ClusterID returns the id of the first server the archive in src
// registers — the server that bootstrapped the cluster, the same on every
// server — or "" when its first events register none.
func ClusterID(src kv.Reader) (string, error) {
	var id string
	n := 0
	err := archive.Scan(src, 1, 0, func(index uint64, seq uint32, data []byte) error {
		if n++; n > clusterScanLimit {
			return kv.ErrStop
		}
		ev, err := events.DecodeEvent(data)
		if err != nil {
			return fmt.Errorf("archive %d/%d: %w", index, seq, err)
		}
		if ev.Type != "ServerRegistered" {
			return nil
		}
		p, err := events.Decode(ev)
		if err != nil {
			return fmt.Errorf("archive %d/%d: %w", index, seq, err)
		}
		id = p.(*events.ServerRegistered).ID
		return kv.ErrStop
	})
	if err != nil && !errors.Is(err, kv.ErrStop) {
		return "", fmt.Errorf("cluster id: %w", err)
	}
	return id, nil
}
