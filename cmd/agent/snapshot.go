package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"

	"github.com/ordoplane/ordo/clock"
	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/httpapi"
	"github.com/ordoplane/ordo/commands/server"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/history/backup"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/fsm"
	"github.com/ordoplane/ordo/storage/archive"
	"github.com/ordoplane/ordo/storage/kv"
	"github.com/ordoplane/ordo/storage/raftlog"
)

// snapshots serves the operator's snapshot save and restore
// (httpapi.Snapshots) through history/backup: a restore installs the
// file through raft and then restarts this server's leader-only
// processors, so they start again from the restored state.
type snapshots struct {
	a        *Agent
	restorer *backup.Restorer
	// mu holds a restore from its retry check to its record, so a retry
	// sent while the first restore runs finds its record.
	mu sync.Mutex
}

var _ httpapi.Snapshots = (*snapshots)(nil)

// newSnapshots returns the agent's snapshot endpoints; a restore writes
// its payload in the data directory's scratch directory.
func (a *Agent) newSnapshots() *snapshots {
	s := &snapshots{a: a}
	s.restorer = backup.NewRestorer(backup.RestoreConfig{Node: a.node, Dir: filepath.Join(a.cfg.DataDir, "scratch"),
		Logger: a.log, Registerer: a.reg, CheckRow: a.fsm.CheckSavedRow, Restored: func() {
			if a.sup != nil {
				a.sup.Restart()
			}
		}})
	return s
}

func (s *snapshots) Save(w io.Writer, src kv.Reader) error {
	_, err := backup.Save(w, src, backup.SaveOptions{Server: s.a.id, Version: Version,
		Projections: s.a.fsm.Projections(), Clock: clock.System{}})
	return err
}

func (s *snapshots) Restore(ctx context.Context, req commands.Request, body io.Reader) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	// A retry (the same Idempotency-Key) answers what the first restore
	// installed instead of installing the file again over what was
	// written since.
	if prev, ok, err := s.previous(req.CommandID); err != nil || ok {
		return prev, err
	}
	res, err := s.restorer.Restore(ctx, body)
	switch {
	case errors.Is(err, backup.ErrInvalid):
		return nil, commands.Invalid("snapshot", "%s", strings.TrimPrefix(err.Error(), backup.ErrInvalid.Error()+": "))
	case errors.Is(err, raftlog.ErrNotLeader):
		return nil, fmt.Errorf("%w: %v", commands.ErrNoLeader, err)
	case err != nil:
		return nil, err
	}
	// The archive records the restore, and who asked for it.
	rec := server.RecordRestore{Restore: events.SnapshotRestored{Server: s.a.id, Index: res.Index,
		SnapshotIndex: res.SnapshotIndex, ClusterID: res.ClusterID, SavedBy: res.SavedBy, SavedAt: res.SavedAt,
		Rows: res.Rows, Checksum: res.Checksum}}
	out := restored{Result: res}
	if o, err := s.a.pipeline.Run(ctx, "server.snapshot_restored", req, rec); err != nil {
		s.a.log.Error("snapshot restored, but recording it in the log failed", "index", res.Index, "err", err)
	} else {
		out.RecordedAt = o.Index
	}
	return out, nil
}

// restored is the answer of a restore: what was installed, and the index
// of the SnapshotRestored event that records it (0: recording it failed;
// the agent's log says why). Duplicate: a retry, answered from that
// event, installed nothing.
type restored struct {
	backup.Result
	RecordedAt uint64
	Duplicate  bool `json:",omitempty"`
}

// previous returns the answer of the restore recorded with command id
// id, if one is: ok is false when id is empty or unused; a key used by
// another command is a conflict.
func (s *snapshots) previous(id string) (restored, bool, error) {
	if id == "" {
		return restored{}, false, nil
	}
	snap := s.a.store.Snapshot()
	defer snap.Close()
	index, ok, err := fsm.CommandIndex(projections.NewView(snap), id)
	if err != nil || !ok {
		return restored{}, false, err
	}
	var rec *events.SnapshotRestored
	err = archive.Scan(snap, index, index, func(_ uint64, _ uint32, data []byte) error {
		ev, err := events.DecodeEvent(data)
		if err != nil || ev.Type != "SnapshotRestored" {
			return err
		}
		p, err := events.Decode(ev)
		rec, _ = p.(*events.SnapshotRestored)
		return err
	})
	if err != nil {
		return restored{}, false, err
	}
	if rec == nil {
		return restored{}, false, &commands.ConflictError{Reason: fmt.Sprintf("Idempotency-Key %q was used at index %d by another command", id, index)}
	}
	return restored{Duplicate: true, RecordedAt: index, Result: backup.Result{Index: rec.Index, SnapshotIndex: rec.SnapshotIndex,
		ClusterID: rec.ClusterID, SavedBy: rec.SavedBy, SavedAt: rec.SavedAt, Rows: rec.Rows, Checksum: rec.Checksum}}, true, nil
}
