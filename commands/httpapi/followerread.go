package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/ordoplane/ordo/api"
	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/storage/raftlog"
)

// A follower answers a default read from its own state, and the read is
// still linearizable (read-index style):
//
//  1. it asks the leader for a read index: the leader confirms, through a
//     quorum round begun after the request, that it still leads
//     (raftlog.Node.ConsistentRead) and answers the index it has applied,
//     which covers every write acknowledged before the read began;
//  2. it waits until it has applied that index itself, then reads.
//
// Reads waiting at once on one follower share one request to the leader
// (raftlog.Rounds), so the leader sees one small request where it saw
// every read proxied through it before. When the leader cannot be asked,
// or this server does not catch up within followerReadWait, the read is
// forwarded to the leader as any other.

// readIndexPath is where a follower asks the leader for a read index.
const readIndexPath = "/v1/operator/raft/read-index"

// followerReadWait bounds how long a follower tries to answer a read
// itself before forwarding it.
const followerReadWait = 2 * time.Second

// followerReads is a follower's side: its shared rounds and their client.
type followerReads struct {
	rounds raftlog.Rounds[uint64]
	client *http.Client
}

// readIndex answers readIndexPath on the leader. It is never forwarded:
// a follower asking a server that no longer leads gets 503 and forwards
// its read instead.
func (s *Server) readIndex(w http.ResponseWriter, r *http.Request) error {
	if !s.node.IsLeader() {
		return fmt.Errorf("%w: this server does not lead", commands.ErrNoLeader)
	}
	if err := s.node.ConsistentRead(r.Context()); err != nil {
		return fmt.Errorf("%w: %v", commands.ErrNoLeader, err)
	}
	index, _ := s.cfg.FSM.Notifier().Applied()
	writeJSON(w, http.StatusOK, api.ReadIndex{Index: index})
	return nil
}

// awaitReadIndex returns once this follower's state reflects every write
// acknowledged before the call: it has applied the leader's read index.
func (s *Server) awaitReadIndex(ctx context.Context) error {
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, followerReadWait)
	defer cancel()
	index, err := s.follower.rounds.Wait(ctx, s.fetchReadIndex)
	if err != nil {
		return fmt.Errorf("read index from the leader: %w", err)
	}
	notify := s.cfg.FSM.Notifier()
	for {
		applied, wake := notify.Applied()
		if applied >= index {
			s.metrics.readIndex.Observe(time.Since(start).Seconds())
			return nil
		}
		select {
		case <-wake:
		case <-ctx.Done():
			return fmt.Errorf("applying up to read index %d (at %d): %w", index, applied, ctx.Err())
		}
	}
}

// fetchReadIndex asks the leader for a read index: one shared round.
func (s *Server) fetchReadIndex() (uint64, error) {
	s.metrics.readIndexRounds.Inc()
	addr, err := s.fwd.leaderHTTP()
	if err != nil {
		return 0, err
	}
	c, err := api.New([]string{addr}, api.WithHTTPClient(s.follower.client), api.WithHeader(forwardedHeader, s.cfg.Self.ID),
		api.WithLogger(s.cfg.Logger))
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), followerReadWait)
	defer cancel()
	var ans api.ReadIndex
	if err := c.Get(ctx, readIndexPath, nil, &ans); err != nil {
		return 0, fmt.Errorf("asking leader at %s: %w", addr, err)
	}
	return ans.Index, nil
}

// followerReadKey marks the context of a read a follower answers itself.
type followerReadKey struct{}

// isFollowerRead reports whether r is a default read this follower
// answers itself: a handler lacking what the leader has (a root key not
// replicated here yet) forwards it instead of failing.
func isFollowerRead(r *http.Request) bool {
	return r.Context().Value(followerReadKey{}) != nil
}
