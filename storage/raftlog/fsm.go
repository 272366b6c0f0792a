package raftlog

import (
	"io"
	"time"

	"github.com/hashicorp/raft"
)

// fsm adapts an Applier to raft.BatchingFSM.
type fsm struct {
	app Applier
	m   *metrics
}

var _ raft.BatchingFSM = (*fsm)(nil)

func (f *fsm) Apply(l *raft.Log) any { return f.ApplyBatch([]*raft.Log{l})[0] }

func (f *fsm) ApplyBatch(logs []*raft.Log) []any {
	out := make([]any, len(logs))
	cmds := make([]Log, 0, len(logs))
	pos := make([]int, 0, len(logs))
	for i, l := range logs {
		if l.Type != raft.LogCommand {
			continue
		}
		cmds = append(cmds, Log{Index: l.Index, Term: l.Term, Data: l.Data})
		pos = append(pos, i)
	}
	if len(cmds) == 0 {
		return out
	}
	start := time.Now()
	res := f.app.Apply(cmds)
	f.m.apply.Observe(time.Since(start).Seconds())
	f.m.batch.Observe(float64(len(cmds)))
	for j, i := range pos {
		out[i] = res[j]
	}
	return out
}

func (f *fsm) Snapshot() (raft.FSMSnapshot, error) {
	s, err := f.app.Snapshot()
	if err != nil {
		return nil, err
	}
	return fsmSnapshot{s}, nil
}

func (f *fsm) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	return f.app.Restore(rc)
}

type fsmSnapshot struct{ s Snapshot }

func (s fsmSnapshot) Persist(sink raft.SnapshotSink) error {
	if err := s.s.Persist(sink); err != nil {
		sink.Cancel()
		return err
	}
	return sink.Close()
}

func (s fsmSnapshot) Release() { s.s.Release() }
