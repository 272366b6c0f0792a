package httpapi

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/ordoplane/ordo/api"
	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/acl/policy"
	"github.com/ordoplane/ordo/commands/alloc"
	"github.com/ordoplane/ordo/commands/node"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/allocs"
	"github.com/ordoplane/ordo/projections/evals"
)

var (
	allocTables = []string{allocs.Table}
	evalTables  = []string{evals.Table}
	// evalAllocTables: an eval's allocations, and the eval for its namespace.
	evalAllocTables = []string{allocs.Table, evals.Table}
)

// allocRoutes serves evaluations, allocations and deployments (Nomad's
// API) and the client's allocation API (ordo's own).
func (s *Server) allocRoutes() {
	s.handle("GET /v1/evaluations", s.leader(endpoint(s.listEvals)))
	s.handle("GET /v1/evaluation/{id}", s.leader(endpoint(s.getEval)))
	s.handle("GET /v1/evaluation/{id}/allocations", s.leader(endpoint(s.evalAllocs)))
	s.handle("GET /v1/allocations", s.leader(endpoint(s.listAllocs)))
	s.handle("GET /v1/allocation/{id}", s.leader(endpoint(s.getAlloc)))
	s.handle("POST /v1/allocation/{id}/stop", s.leader(endpoint(s.stopAlloc)))
	s.handle("PUT /v1/allocation/{id}/stop", s.leader(endpoint(s.stopAlloc)))
	s.handle("GET /v1/job/{id}/allocations", s.leader(endpoint(s.jobAllocs)))
	s.handle("GET /v1/job/{id}/evaluations", s.leader(endpoint(s.jobEvals)))
	s.handle("GET /v1/node/{id}/allocations", s.leader(endpoint(s.nodeAllocs)))
	s.handle("GET /v1/job/{id}/deployments", s.leader(endpoint(s.jobDeployments)))
	s.handle("GET /v1/job/{id}/deployment", s.leader(endpoint(s.jobLatestDeployment)))
	s.handle("GET /v1/deployments", s.leader(endpoint(s.listDeployments)))
	s.handle("GET /v1/deployment/{id}", s.leader(endpoint(s.getDeployment)))
	for _, m := range []string{"POST", "PUT"} {
		s.handle(m+" /v1/deployment/promote/{id}", s.leader(endpoint(s.promoteDeployment)))
		s.handle(m+" /v1/deployment/fail/{id}", s.leader(endpoint(s.failDeployment)))
		s.handle(m+" /v1/deployment/pause/{id}", s.leader(endpoint(s.pauseDeployment)))
		s.handle(m+" /v1/client/{id}/allocs", s.leader(endpoint(s.updateClientAllocs)))
	}
	s.handle("GET /v1/client/{id}/allocations", s.leader(endpoint(s.clientAllocs)))
	s.gcRoutes() // evaldelete.go: eval delete and count, system gc
}

// pathID returns the id in the path, checked as an alloc, eval or
// deployment id (they share the rules).
func pathID(r *http.Request) (string, error) {
	id := r.PathValue("id")
	return id, alloc.ValidID("id", id)
}

// queryBool reads a boolean query parameter; absent is false.
func queryBool(r *http.Request, name string) (bool, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, commands.Invalid(name, "%q is not true or false", v)
	}
	return b, nil
}

// queryNamespace is the namespace parameter of a job's reads, "default"
// when absent.
func queryNamespace(r *http.Request) string {
	if ns := r.URL.Query().Get("namespace"); ns != "" {
		return ns
	}
	return "default"
}

func (s *Server) listAllocs(w http.ResponseWriter, r *http.Request) error {
	pq, err := parsePageQuery(r)
	if err != nil {
		return err
	}
	s.queryPage(w, r, allocTables, func(v projections.View) (any, error) {
		p := newPager(pq)
		err := allocs.Scan(v, allocs.Query{Namespace: pq.namespace, Prefix: pq.prefix, Reverse: pq.reverse, From: pq.from},
			func(a *allocs.Alloc) error { return p.add(a.CreateIndex, a.ID, a.Stub()) })
		return p.result(err)
	})
	return nil
}

// resolveAlloc returns the alloc with id, or the one whose id starts with it.
func resolveAlloc(v projections.View, id string) (*allocs.Alloc, error) {
	a, err := allocs.Resolve(v, id)
	var amb *projections.AmbiguousError
	switch {
	case errors.Is(err, projections.ErrNotFound):
		return nil, &commands.NotFoundError{Kind: "allocation", ID: id}
	case errors.As(err, &amb):
		return nil, commands.Invalid("id", "%v", amb)
	}
	return a, err
}

func (s *Server) getAlloc(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	s.query(w, r, allocJobTables, func(v projections.View) (any, error) {
		a, err := resolveAlloc(v, id)
		if err != nil {
			return nil, err
		}
		if err := s.authorizeNamespace(r, a.Namespace, policy.CapReadJob); err != nil {
			return nil, err
		}
		return withJob(v, a) // allocjob.go: Nomad embeds the job
	})
	return nil
}

func stubs(list []*allocs.Alloc, err error) (any, error) {
	out := make([]*allocs.Stub, 0, len(list))
	for _, a := range list {
		out = append(out, a.Stub())
	}
	return out, err
}

func full(list []*allocs.Alloc, err error) (any, error) {
	if list == nil {
		list = []*allocs.Alloc{}
	}
	return list, err
}

func (s *Server) evalAllocs(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	s.query(w, r, evalAllocTables, func(v projections.View) (any, error) {
		// Authorized against the eval's own namespace (and each alloc's).
		if e, err := evals.Get(v, id); err == nil {
			if err := s.authorizeNamespace(r, e.Namespace, policy.CapReadJob); err != nil {
				return nil, err
			}
		} else if !errors.Is(err, projections.ErrNotFound) {
			return nil, err
		}
		list, err := allocs.ByEval(v, id)
		for _, a := range list {
			if err := s.authorizeNamespace(r, a.Namespace, policy.CapReadJob); err != nil {
				return nil, err
			}
		}
		return stubs(list, err)
	})
	return nil
}

func (s *Server) jobAllocs(w http.ResponseWriter, r *http.Request) error {
	id, ns := r.PathValue("id"), queryNamespace(r)
	s.query(w, r, allocTables, func(v projections.View) (any, error) { return stubs(allocs.ByJob(v, ns, id)) })
	return nil
}

// nodeAllocs answers a node's allocations in full, as Nomad's
// /v1/node/:id/allocations does.
func (s *Server) nodeAllocs(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	if err := node.ValidID("id", id); err != nil {
		return err
	}
	s.query(w, r, allocJobTables, func(v projections.View) (any, error) {
		list, err := allocs.ByNode(v, id)
		if err != nil {
			return nil, err
		}
		return withJobs(v, list) // allocjob.go: Nomad embeds the job
	})
	return nil
}

// stopAlloc stops an allocation (N23: ?no_shutdown_delay=true) and answers
// the eval created to replace it.
func (s *Server) stopAlloc(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	noDelay, err := queryBool(r, "no_shutdown_delay")
	if err != nil {
		return err
	}
	snap := s.cfg.FSM.Store().Snapshot()
	a, err := resolveAlloc(projections.NewView(snap), id)
	snap.Close()
	if err == nil {
		err = s.authorizeNamespace(r, a.Namespace, policy.CapAllocLifecycle)
	}
	if err != nil {
		return err
	}
	out, err := s.cfg.Pipeline.Run(r.Context(), "alloc.stop", request(r), alloc.Stop{ID: a.ID, NoShutdownDelay: noDelay})
	if err != nil {
		return err
	}
	snap = s.cfg.FSM.Store().Snapshot()
	evalID, err := alloc.CreatedEval(projections.NewView(snap), a.Namespace, a.JobID, out.Index)
	snap.Close()
	if err != nil {
		return err
	}
	setIndex(w, out.Index)
	writeJSON(w, http.StatusOK, api.AllocStopResponse{EvalID: evalID, Index: out.Index})
	return nil
}

// clientAllocsRequest is the body of a client's alloc update.
type clientAllocsRequest struct {
	Allocs []events.AllocClientUpdate
}

// updateClientAllocs is ordo's client API: a node reports what became of
// its allocations; the same entry records the index of the node's last
// alloc report (a reconnecting node is ready only after one, N1).
func (s *Server) updateClientAllocs(w http.ResponseWriter, r *http.Request) error {
	var body clientAllocsRequest
	if err := commands.DecodeJSON(r.Body, s.cfg.BodyLimit, &body); err != nil {
		return err
	}
	id, err := pathNodeID(r, "")
	if err != nil {
		return err
	}
	out, err := s.cfg.Pipeline.Run(r.Context(), "alloc.client_update", request(r), alloc.ClientUpdate{NodeID: id, Allocs: body.Allocs})
	if err != nil {
		return err
	}
	writeResult(w, out)
	return nil
}

// clientAllocs is ordo's client API: a blocking query answering every
// allocation on the node in full, with what the servers want of each
// (desired status and transition), so the client learns what to run and
// what to stop.
func (s *Server) clientAllocs(w http.ResponseWriter, r *http.Request) error {
	id, err := pathNodeID(r, "")
	if err != nil {
		return err
	}
	// Blocks on the node's own allocations only (see blockOnKey).
	s.queryKey(w, r, allocs.NodeChangesTable, id, func(v projections.View) (any, error) { return full(allocs.ByNode(v, id)) })
	return nil
}
