package httpapi

import (
	"errors"
	"net/http"
	"time"

	"github.com/ordoplane/ordo/api"
	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/node"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/nodes"
)

// Heartbeats is the heartbeat monitor as the API sees it.
type Heartbeats interface {
	// Heartbeat resets the TTL of node id and returns the TTL within which
	// the node must heartbeat again.
	Heartbeat(id string) time.Duration
	// Forget stops tracking node id.
	Forget(id string)
}

// DefaultHeartbeatTTL is the TTL answered when no heartbeat monitor is configured.
const DefaultHeartbeatTTL = 10 * time.Second

// maxStatusRetries bounds how often a heartbeat is decided again after its
// decision went stale (an alloc update landed in between).
const maxStatusRetries = 3

// A node read shows the index of its last alloc report (a reconnecting node
// is ready only once it passes its last missed heartbeat, N1), kept in a
// table of its own.
var nodeTables = []string{nodes.Table, nodes.AllocUpdatesTable}

func (s *Server) heartbeat(id string) time.Duration {
	if s.cfg.Heartbeats == nil {
		return DefaultHeartbeatTTL
	}
	return s.cfg.Heartbeats.Heartbeat(id)
}

// listNodes lists nodes by id, as Nomad does, paged with the next node's
// id as next_token and filtered on the stubs' JSON.
func (s *Server) listNodes(w http.ResponseWriter, r *http.Request) error {
	pq, err := parsePage(r, func(token string) (string, bool) {
		return token, node.ValidID("next_token", token) == nil
	})
	if err != nil {
		return err
	}
	s.queryPage(w, r, nodeTables, func(v projections.View) (any, error) {
		p := newPager(pq)
		err := nodes.Scan(v, nodes.Query{Prefix: pq.prefix, From: pq.from, Reverse: pq.reverse},
			func(n *nodes.Node) error { return p.addToken(n.ID, n.Stub()) })
		return p.result(err)
	})
	return nil
}

// getNode answers the node with the id in the path, or the one node whose
// id starts with it.
func (s *Server) getNode(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	if err := node.ValidID("id", id); err != nil {
		return err
	}
	s.query(w, r, nodeTables, func(v projections.View) (any, error) {
		n, err := nodes.Resolve(v, id)
		var amb *projections.AmbiguousError
		switch {
		case errors.Is(err, projections.ErrNotFound):
			return nil, &commands.NotFoundError{Kind: "node", ID: id}
		case errors.As(err, &amb):
			return nil, commands.Invalid("id", "%v", amb)
		}
		return n, err
	})
	return nil
}

func writeNodeResult(w http.ResponseWriter, out commands.Outcome, ttl time.Duration) {
	setIndex(w, out.Index)
	writeJSON(w, http.StatusOK, api.NodeWriteResponse{HeartbeatTTL: ttl, EvalIDs: []string{},
		NodeModifyIndex: out.Index, Index: out.Index, Duplicate: out.Duplicate})
}

// pathNodeID returns the node id in the path, which a body's NodeID must
// match when it has one.
func pathNodeID(r *http.Request, bodyID string) (string, error) {
	id := r.PathValue("id")
	if err := node.ValidID("id", id); err != nil {
		return "", err
	}
	if bodyID != "" && bodyID != id {
		return "", commands.Invalid("NodeID", "%q does not match the id in the path, %q", bodyID, id)
	}
	return id, nil
}

// eligibilityRequest is Nomad's api.NodeUpdateEligibilityRequest.
type eligibilityRequest struct {
	NodeID      string
	Eligibility string
}

func (s *Server) updateNodeEligibility(w http.ResponseWriter, r *http.Request) error {
	var body eligibilityRequest
	if err := commands.DecodeJSON(r.Body, s.cfg.BodyLimit, &body); err != nil {
		return err
	}
	id, err := pathNodeID(r, body.NodeID)
	if err != nil {
		return err
	}
	out, err := s.cfg.Pipeline.Run(r.Context(), "node.eligibility", request(r),
		node.UpdateEligibility{ID: id, Eligibility: body.Eligibility})
	if err != nil {
		return err
	}
	writeNodeResult(w, out, 0)
	return nil
}

// drainRequest is Nomad's api.NodeUpdateDrainRequest; a null DrainSpec
// stops the drain.
type drainRequest struct {
	NodeID    string
	DrainSpec *struct {
		// Deadline is in nanoseconds, as Go's time.Duration marshals.
		Deadline         int64
		IgnoreSystemJobs bool
	}
	MarkEligible bool
}

func (s *Server) updateNodeDrain(w http.ResponseWriter, r *http.Request) error {
	var body drainRequest
	if err := commands.DecodeJSON(r.Body, s.cfg.BodyLimit, &body); err != nil {
		return err
	}
	id, err := pathNodeID(r, body.NodeID)
	if err != nil {
		return err
	}
	cmd := node.UpdateDrain{ID: id, MarkEligible: body.MarkEligible}
	if body.DrainSpec != nil {
		cmd.Spec = &node.DrainSpec{Deadline: time.Duration(body.DrainSpec.Deadline), IgnoreSystemJobs: body.DrainSpec.IgnoreSystemJobs}
	}
	out, err := s.cfg.Pipeline.Run(r.Context(), "node.drain", request(r), cmd)
	if err != nil {
		return err
	}
	writeNodeResult(w, out, 0)
	return nil
}

func (s *Server) purgeNode(w http.ResponseWriter, r *http.Request) error {
	id, err := pathNodeID(r, "")
	if err != nil {
		return err
	}
	out, err := s.cfg.Pipeline.Run(r.Context(), "node.deregister", request(r), node.Deregister{ID: id})
	if err != nil {
		return err
	}
	if s.cfg.Heartbeats != nil {
		s.cfg.Heartbeats.Forget(id)
	}
	writeNodeResult(w, out, 0)
	return nil
}

// registerNode is ordo's client API: a client registers its node and
// learns the TTL to heartbeat within.
func (s *Server) registerNode(w http.ResponseWriter, r *http.Request) error {
	var n events.Node
	if err := commands.DecodeJSON(r.Body, s.cfg.BodyLimit, &n); err != nil {
		return err
	}
	out, err := s.cfg.Pipeline.Run(r.Context(), "node.register", request(r), node.Register{Node: n})
	if err != nil {
		return err
	}
	writeNodeResult(w, out, s.heartbeat(n.ID))
	return nil
}

// heartbeatRequest is the body of a client heartbeat; an empty body or
// Status means ready.
type heartbeatRequest struct {
	Status string
}

// heartbeatNode is ordo's client API: the node asks to be ready (or stay
// initializing) and its TTL is reset. N1 may answer a reconnecting node
// with initializing; it keeps heartbeating until it is ready.
func (s *Server) heartbeatNode(w http.ResponseWriter, r *http.Request) error {
	var body heartbeatRequest
	if r.ContentLength != 0 {
		if err := commands.DecodeJSON(r.Body, s.cfg.BodyLimit, &body); err != nil {
			return err
		}
	}
	id, err := pathNodeID(r, "")
	if err != nil {
		return err
	}
	switch body.Status {
	case "":
		body.Status = events.NodeStatusReady
	case events.NodeStatusReady, events.NodeStatusInitializing:
	default:
		return commands.Invalid("Status", "a client heartbeats as %q or %q, not %q",
			events.NodeStatusReady, events.NodeStatusInitializing, body.Status)
	}
	req := request(r)
	cmd := node.UpdateStatus{ID: id, Status: body.Status, Description: "heartbeat"}
	var out commands.Outcome
	for attempt := 0; ; attempt++ {
		out, err = s.cfg.Pipeline.Run(r.Context(), "node.status", req, cmd)
		var ce *commands.ConflictError
		if err == nil || !errors.As(err, &ce) || req.CommandID != "" || attempt+1 >= maxStatusRetries {
			break
		}
	}
	if err != nil {
		return err
	}
	writeNodeResult(w, out, s.heartbeat(id))
	return nil
}
