package agent

import (
	"context"
	"sync"
)

// buildVersion is the ordo version this server records in its data
// directory and names when it refuses one a newer ordo wrote
// (fsm.Config.Version): Version, except in tests that play an
// older or newer build.
var buildVersion = Version

// raftStop stops the raft node once, whether the FSM halted or the agent
// shuts down.
type raftStop struct {
	once sync.Once
	err  error
}

// stopRaft shuts the raft node down, once.
func (a *Agent) stopRaft() error {
	a.raftStop.once.Do(func() {
		if a.node != nil {
			a.raftStop.err = a.node.Shutdown()
		}
	})
	return a.raftStop.err
}

// watchHalt takes the server out of the raft cluster when its FSM halts
// (an entry or snapshot this build cannot read: projections.HaltError).
// A halted FSM applies nothing more, so the server must neither lead nor
// vote: it would answer from a state that stopped moving, and as a leader
// keep the others from electing one that can apply. The process stays up:
// /v1/agent/health answers 503 with the halt, ordo_fsm_halted is 1, and
// reads serve the state as of the last entry applied. Restarting with a
// build that knows the entry resumes from there: nothing was skipped, and
// raft kept the entries (a halted FSM takes no snapshot, so the log is not
// truncated past it).
func (a *Agent) watchHalt(ctx context.Context) {
	select {
	case <-ctx.Done():
		return
	case <-a.fsm.Halted():
	}
	a.log.Error("fsm halted: leaving the raft cluster; restart this server with a newer ordo",
		"err", a.fsm.Halt(), "build", buildVersion)
	if err := a.stopRaft(); err != nil {
		a.log.Error("stop raft after the fsm halted", "err", err)
	}
}

// leaderChanges is the raft node's leadership changes for the supervisor,
// followed by a loss when the FSM halts: the server leaves raft then
// (watchHalt), and a stopped raft node reports no loss of its own, so the
// leader-only processors would go on submitting to it.
func (a *Agent) leaderChanges(ctx context.Context) <-chan bool {
	out := make(chan bool, 1)
	a.goroutine(func() {
		in := a.node.LeaderChanges()
		for {
			var v bool
			select {
			case <-ctx.Done():
				return
			case <-a.fsm.Halted():
				v = false
			case v = <-in:
			}
			select {
			case out <- v:
			case <-ctx.Done():
				return
			}
			if a.fsm.Halt() != nil && !v {
				return
			}
		}
	})
	return out
}
