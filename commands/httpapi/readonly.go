package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/storage/raftlog"
)

// raftNode is what the API asks of the raft node: *raftlog.Node on a
// server, readOnlyNode on a read-only one.
type raftNode interface {
	IsLeader() bool
	Leader() (id, addr string)
	LastContact() time.Time
	Servers() ([]raftlog.Server, error)
	Stats() map[string]string
	// ConsistentRead returns once this server's state reflects every
	// write acknowledged before the call (raftlog.Node.ConsistentRead).
	ConsistentRead(ctx context.Context) error
}

var _ raftNode = (*raftlog.Node)(nil)

// readOnlyNode stands in for raft on a read-only server (Config.ReadOnly):
// the server is the only one and leads itself, so every read is answered
// locally and nothing is ever forwarded.
type readOnlyNode struct {
	self   Self
	reason string
}

func (readOnlyNode) IsLeader() bool             { return true }
func (n readOnlyNode) Leader() (string, string) { return n.self.ID, n.self.RaftAddr }
func (readOnlyNode) LastContact() time.Time     { return time.Time{} }

// ConsistentRead: nothing writes a read-only server's store.
func (readOnlyNode) ConsistentRead(context.Context) error { return nil }
func (n readOnlyNode) Servers() ([]raftlog.Server, error) {
	return []raftlog.Server{{ID: n.self.ID, Address: n.self.RaftAddr, Voter: true}}, nil
}
func (n readOnlyNode) Stats() map[string]string {
	return map[string]string{"state": "ReadOnly", "read_only": n.reason}
}

// refuseWrite answers a request that would change state on a read-only
// server with 409 naming why the server is read-only, and reports whether
// it did. Reads, and the two writes that change nothing (parsing a
// jobspec, planning a job), pass.
func (s *Server) refuseWrite(w http.ResponseWriter, r *http.Request) bool {
	if s.cfg.ReadOnly == "" || r.Method == http.MethodGet || r.Method == http.MethodHead {
		return false
	}
	p := r.URL.Path
	if (r.Method == http.MethodPut || r.Method == http.MethodPost) &&
		(p == "/v1/jobs/parse" || strings.HasPrefix(p, "/v1/job/") && strings.HasSuffix(p, "/plan")) {
		return false
	}
	writeError(w, &commands.ConflictError{Reason: fmt.Sprintf(
		"this server is read-only (%s): %s %s would change the cluster, and nothing is ever appended here", s.cfg.ReadOnly, r.Method, p)})
	return true
}
