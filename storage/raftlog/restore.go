package raftlog

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/hashicorp/raft"
)

// restoreSlack is how far past raft's last index Restore asks raft to
// install a payload: entries appended between the read of the last index
// and the restore (which raft's leader loop takes in turn with them) would
// otherwise land past the index written into the payload, and a follower
// that applied them would skip the payload as older than its state.
const restoreSlack = 4096

// restoreTimeout bounds a restore when ctx has no deadline.
const restoreTimeout = 10 * time.Minute

// Restore installs a snapshot payload of size bytes on the cluster
// through raft's user restore; leader only. Raft installs it on the
// leader's FSM at a new index past its log and leaves a hole in the log
// before it, so every follower installs it by a snapshot install. setIndex
// is called first with that index, to write it into the payload, which
// Restore then reads from its start. It returns the index raft installed
// the payload at; an error if raft chose another one (its log grew by
// more than restoreSlack meanwhile), since the payload then names the
// wrong one.
func (n *Node) Restore(ctx context.Context, payload io.ReadSeeker, size int64, setIndex func(index uint64) error) (uint64, error) {
	if !n.IsLeader() {
		return 0, ErrNotLeader
	}
	index := n.raft.LastIndex() + restoreSlack
	if err := setIndex(index); err != nil {
		return 0, err
	}
	if _, err := payload.Seek(0, io.SeekStart); err != nil {
		return 0, fmt.Errorf("restore: %w", err)
	}
	timeout := restoreTimeout
	if dl, ok := ctx.Deadline(); ok {
		timeout = time.Until(dl)
	}
	// Raft installs at max(meta.Index, its last index) + 1.
	meta := &raft.SnapshotMeta{Version: raft.SnapshotVersionMax, Index: index - 1, Size: size}
	if err := n.raft.Restore(meta, payload, timeout); err != nil {
		return 0, fmt.Errorf("restore: %w", mapErr(err))
	}
	// The restore's snapshot is the newest raft holds now.
	list, err := n.snaps.List()
	if err != nil || len(list) == 0 {
		return index, fmt.Errorf("restore: installed, but its snapshot is not listed: %v", err)
	}
	if got := list[0].Index; got != index {
		return got, fmt.Errorf("restore: raft installed the payload at index %d, not the %d it names", got, index)
	}
	return index, nil
}
