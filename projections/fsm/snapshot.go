package fsm

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/ordoplane/ordo/projections/internal/layout"
	"github.com/ordoplane/ordo/storage/kv"
	"github.com/ordoplane/ordo/storage/raftlog"
)

// snapshotMagic starts every FSM snapshot, followed by the applied index.
const snapshotMagic = "ordo-fsm-1\n"

// Snapshot implements raftlog.Applier: it captures the whole state store
// (archive and projections) at the applied index.
func (f *FSM) Snapshot() (raftlog.Snapshot, error) {
	if h := f.Halt(); h != nil {
		return nil, h // a halted store is behind raft's applied index
	}
	return &fsmSnapshot{snap: f.store.Snapshot(), index: f.applied.Load()}, nil
}

type fsmSnapshot struct {
	snap  *kv.Snapshot
	index uint64
}

func (s *fsmSnapshot) Persist(w io.Writer) error {
	bw := bufio.NewWriter(w)
	bw.WriteString(snapshotMagic)
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], s.index)
	bw.Write(b[:])
	if err := kv.Export(withoutLocal{s.snap}, bw); err != nil {
		return fmt.Errorf("persist snapshot at %d: %w", s.index, err)
	}
	return bw.Flush()
}

func (s *fsmSnapshot) Release() { s.snap.Close() }

// Restore implements raftlog.Applier. A snapshot no newer than the local
// state is skipped: the state store survives restarts and raft replays
// only what follows. A restore voids a rebuild in progress; projections
// the snapshot holds at another version are rebuilt before it returns
// (with Config.AllowStale). An operator's restore (RestorePayload)
// replaces the store the same way and records the payload's index as the
// applied index: the saved state then stands at the raft index raft
// installed it at.
func (f *FSM) Restore(r io.Reader) error {
	f.applyMu.Lock()
	defer f.applyMu.Unlock()
	if h := f.Halt(); h != nil {
		return h
	}
	br := bufio.NewReader(r)
	hdr := make([]byte, len(snapshotMagic)+8)
	_, err := io.ReadFull(br, hdr)
	magic := string(hdr[:len(snapshotMagic)])
	if err != nil || magic != snapshotMagic && magic != restoreMagic {
		return errors.New("restore: not an ordo FSM snapshot")
	}
	operator := magic == restoreMagic
	index := binary.BigEndian.Uint64(hdr[len(snapshotMagic):])
	if index <= f.applied.Load() {
		f.log.Info("snapshot skipped: state is newer", "snapshot_index", index, "applied", f.applied.Load(), "operator_restore", operator)
		_, err := io.Copy(io.Discard, br)
		return err
	}
	// The applied index lands last: a crash mid-import leaves it absent, so
	// the next start restores the snapshot again instead of trusting a
	// half-written store.
	f.gen.Add(1)
	f.epoch.Add(1)
	if err := f.store.Import(br, layout.AppliedKey); err != nil {
		return fmt.Errorf("restore at %d: %w", index, err)
	}
	if operator {
		w := f.store.WriteBatch()
		if err := errors.Join(w.Set(layout.RestoredKey, kv.Uint64Value(index)), w.Set(layout.AppliedKey, kv.Uint64Value(index))); err != nil {
			w.Close()
			return fmt.Errorf("restore at %d: %w", index, err)
		}
		if err := w.Commit(true); err != nil {
			return fmt.Errorf("restore at %d: %w", index, err)
		}
	}
	f.log.Info("restored snapshot", "index", index, "operator_restore", operator)
	if err := f.load(); err != nil {
		if errors.Is(err, ErrDowngrade) {
			return f.haltWith(index, err) // compat.go: a newer ordo's snapshot
		}
		return err
	}
	if stale := f.Stale(); len(stale) > 0 {
		f.log.Warn("restored snapshot holds stale projections: rebuilding them from the archive", "stale", fmt.Sprint(stale))
		return f.rebuildLocked(context.Background(), staleProjs(stale), f.observer())
	}
	return nil
}
