package httpapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/ordoplane/ordo/commands"

	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/storage/kv"
)

// errNoSnapshots answers the snapshot endpoints on a server built without
// them.
var errNoSnapshots = errors.New("ordo: this server does not save or restore snapshots")

// Snapshots saves and restores the cluster's whole state (Config.Snapshots:
// history/backup, wired by the agent).
type Snapshots interface {
	// Save writes the state src holds (a consistent snapshot of the
	// state store) to w as a snapshot file.
	Save(w io.Writer, src kv.Reader) error
	// Restore checks the snapshot file read from body whole and installs
	// it on the cluster, for req's actor; it answers what it installed. A
	// file refused for what it holds is a *commands.ValidationError (400),
	// and nothing is installed.
	Restore(ctx context.Context, req commands.Request, body io.Reader) (any, error)
}

// saveSnapshot serves GET /v1/operator/snapshot: the leader's whole
// state (any server's with ?stale) streamed as a snapshot file, at the
// applied index X-Nomad-Index names. The file is written whole first, so
// its Digest header (sha-256, as Nomad's) precedes it; an error while
// sending aborts the response, so a restore refuses the truncated file.
func (s *Server) saveSnapshot(w http.ResponseWriter, r *http.Request) error {
	if s.cfg.Snapshots == nil {
		return notImplemented{errNoSnapshots}
	}
	if err := refuseHistorical(r, "a snapshot saves the current state, not a past one"); err != nil {
		return err
	}
	snap := s.cfg.FSM.Store().Snapshot()
	defer snap.Close()
	index, err := projections.NewView(snap).AppliedIndex()
	if err != nil {
		return err
	}
	sp, err := spoolSnapshot(s.cfg.Snapshots, snap) // snapshotdigest.go: whole, for its Digest header
	if err != nil {
		return err
	}
	defer sp.close()
	h := w.Header()
	h.Set("Content-Type", "application/octet-stream")
	h.Set("Content-Disposition", fmt.Sprintf("attachment; filename=\"ordo-%d.snap\"", index))
	setIndex(w, index)
	if err := sp.send(w); err != nil {
		s.cfg.Logger.Warn("snapshot send aborted mid-stream", "index", index, "err", err)
		panic(http.ErrAbortHandler)
	}
	return nil
}

// restoreSnapshot serves PUT /v1/operator/snapshot on the leader: the
// body is a snapshot file, installed as the whole state of the cluster.
// The body has no size limit (a state store's size); it is checked whole
// before anything is installed.
func (s *Server) restoreSnapshot(w http.ResponseWriter, r *http.Request) error {
	if s.cfg.Snapshots == nil {
		return notImplemented{errNoSnapshots}
	}
	out, err := s.cfg.Snapshots.Restore(r.Context(), request(r), r.Body)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}
