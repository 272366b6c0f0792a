package raftlog

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/raft"
)

// A leader answers from its own state only once that state is current:
//
//   - ready: after winning an election it commits a barrier in its own term
//     and waits until it has applied it, so every entry its predecessors
//     committed is applied before it serves a read or decides a command;
//   - confirmed: before a read it confirms that no newer leader exists, by
//     committing a barrier entry appended after the read began: a quorum
//     must accept an entry this node sent after the read began, which no
//     server of a newer term does. Reads waiting at once share one
//     confirmation. (raft's VerifyLeader is not enough: it counts any
//     answer that arrives after the round began, even to a heartbeat
//     sent before it, so a leader paused and resumed could count a
//     follower's answer from before its pause and serve a stale read.)
//
// LeaderChanges reports a gained leadership only once it is ready, so
// leader-only processors never start from a state missing earlier terms.

// readiness tracks whether this node leads with a current state.
type readiness struct {
	mu struct {
		sync.Mutex
		// term is the term whose barrier has applied; 0 when not ready.
		term uint64
		// changed closes when term or leadership changes.
		changed chan struct{}
		// forwarded is whether LeaderChanges last said true.
		forwarded bool
	}
	verify Rounds[struct{}]
}

// watchLeadership turns raft's leadership notifications into LeaderChanges:
// a gain is passed on once the term's barrier has applied, a loss at once
// (when the gain was passed on). It runs until shutdown.
func (n *Node) watchLeadership(notify <-chan bool) {
	ready := make(chan uint64, 1)
	for {
		select {
		case <-n.shutdown:
			n.setReady(0)
			return
		case leading := <-notify:
			n.setReady(0)
			if leading {
				term := n.raft.CurrentTerm()
				go n.barrierForTerm(term, ready)
				continue
			}
			n.forward(false)
		case term := <-ready:
			if n.raft.State() != raft.Leader || n.raft.CurrentTerm() != term {
				continue // lost, or won again: a newer notification follows
			}
			n.setReady(term)
			n.forward(true)
		}
	}
}

// barrierForTerm commits a barrier in term and sends term on ready once it
// applied; it gives up when this node stops leading in term.
func (n *Node) barrierForTerm(term uint64, ready chan<- uint64) {
	start := time.Now()
	for {
		err := n.raft.Barrier(0).Error()
		if err == nil {
			n.metrics.ready.Observe(time.Since(start).Seconds())
			select {
			case ready <- term:
			case <-n.shutdown:
			}
			return
		}
		if n.raft.State() != raft.Leader || n.raft.CurrentTerm() != term {
			return
		}
		select {
		case <-time.After(50 * time.Millisecond):
		case <-n.shutdown:
			return
		}
	}
}

// setReady records the term this node leads with a current state (0: none)
// and wakes everyone waiting for it.
func (n *Node) setReady(term uint64) {
	r := &n.read
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.mu.term == term && term != 0 {
		return
	}
	r.mu.term = term
	close(r.mu.changed)
	r.mu.changed = make(chan struct{})
}

// forward passes a leadership change on to LeaderChanges, a loss only when
// the gain was passed on.
func (n *Node) forward(leading bool) {
	r := &n.read
	r.mu.Lock()
	send := leading != r.mu.forwarded
	r.mu.forwarded = leading
	r.mu.Unlock()
	if !send {
		return
	}
	select {
	case n.leaderCh <- leading:
	case <-n.shutdown:
	}
}

// AwaitReady returns once this node leads and has applied every entry
// committed before its term began, so a decision taken from its state
// misses no earlier write. It returns ErrNotLeader when this node does
// not lead (or stops leading while waiting).
func (n *Node) AwaitReady(ctx context.Context) error {
	for {
		r := &n.read
		r.mu.Lock()
		term, changed := r.mu.term, r.mu.changed
		r.mu.Unlock()
		if n.raft.State() != raft.Leader {
			return ErrNotLeader
		}
		if term != 0 && term == n.raft.CurrentTerm() {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return fmt.Errorf("%w: waiting for the new leader to apply earlier entries: %v", ErrNotLeader, ctx.Err())
		case <-n.shutdown:
			return ErrShutdown
		case <-time.After(100 * time.Millisecond):
			// Leadership lost without a notification yet: look again.
		}
	}
}

// ConsistentRead returns once a read of this node's state begun now
// reflects every write acknowledged before the call: this node is ready
// (AwaitReady) and a quorum has confirmed it still leads, by committing
// a barrier appended after the call (confirmLeader). It returns ErrNotLeader when this
// node does not lead. A configuration whose only voter is this node (a
// dev agent, a lone server) needs no round: no other server can be
// elected without a configuration change this node appends itself, and
// raft's latest configuration shows it as soon as it is appended.
func (n *Node) ConsistentRead(ctx context.Context) error {
	if err := n.AwaitReady(ctx); err != nil {
		return err
	}
	if n.soleVoter() {
		return nil
	}
	start := time.Now()
	_, err := n.read.verify.Wait(ctx, n.confirmLeader)
	n.metrics.confirm.Observe(time.Since(start).Seconds())
	if err != nil && ctx.Err() != nil {
		return fmt.Errorf("%w: confirming leadership: %v", ErrNotLeader, err)
	}
	return err
}

// confirmTimeout bounds one confirmation: past it the read fails as if
// this node did not lead (its callers forward or answer 503).
const confirmTimeout = 5 * time.Second

// confirmLeader runs one confirmation round: a barrier committed by a
// quorum and applied here.
func (n *Node) confirmLeader() (struct{}, error) {
	n.metrics.rounds.Inc()
	if err := n.raft.Barrier(confirmTimeout).Error(); err != nil {
		n.metrics.failures.Inc()
		return struct{}{}, mapErr(err)
	}
	return struct{}{}, nil
}

// soleVoter reports whether this node is the only voter of raft's latest
// configuration (committed or not); raft answers it without its main loop.
func (n *Node) soleVoter() bool {
	f := n.raft.GetConfiguration()
	if f.Error() != nil {
		return false
	}
	voters, self := 0, false
	for _, s := range f.Configuration().Servers {
		if s.Suffrage == raft.Voter {
			voters++
			self = self || string(s.ID) == n.cfg.ID
		}
	}
	return voters == 1 && self
}
