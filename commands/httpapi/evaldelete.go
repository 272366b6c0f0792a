package httpapi

import (
	"errors"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ordoplane/ordo/api"
	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/eval"
	"github.com/ordoplane/ordo/commands/gc"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/evaldelete"
	"github.com/ordoplane/ordo/projections/evals"
	"github.com/ordoplane/ordo/projections/order"
)

// gcRoutes serves eval delete (by id and by filter, N4), the eval count
// and the on-demand garbage collection.
func (s *Server) gcRoutes() {
	m := newGCMetrics(s.cfg.Registerer)
	s.handle("DELETE /v1/evaluations", s.leader(endpoint(func(w http.ResponseWriter, r *http.Request) error { return s.deleteEvals(w, r, m) })))
	s.handle("GET /v1/evaluations/count", s.leader(endpoint(s.countEvals)))
	s.handle("PUT /v1/system/gc", s.leader(endpoint(s.systemGC)))
	s.handle("POST /v1/system/gc", s.leader(endpoint(s.systemGC)))
}

// gcMetrics count what the API deleted.
type gcMetrics struct {
	evalsDeleted prometheus.Counter
	pages        prometheus.Counter
}

func newGCMetrics(reg prometheus.Registerer) *gcMetrics {
	m := &gcMetrics{
		evalsDeleted: prometheus.NewCounter(prometheus.CounterOpts{Name: "ordo_eval_delete_evals_total",
			Help: "Evaluations deleted through DELETE /v1/evaluations (by id or filter): the progress of a bulk delete."}),
		pages: prometheus.NewCounter(prometheus.CounterOpts{Name: "ordo_eval_delete_pages_total",
			Help: "Pages (entries) of eval deletes by filter appended."}),
	}
	if reg != nil {
		m.evalsDeleted = registerOrReuse(reg, m.evalsDeleted)
		m.pages = registerOrReuse(reg, m.pages)
	}
	return m
}

// registerOrReuse registers c, or returns the collector already
// registered under its name (several servers in one test process).
func registerOrReuse(reg prometheus.Registerer, c prometheus.Counter) prometheus.Counter {
	if err := reg.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if old, ok := are.ExistingCollector.(prometheus.Counter); ok {
				return old
			}
		}
	}
	return c
}

// The body and answer of DELETE /v1/evaluations are api.EvalDeleteRequest
// and api.EvalDeleteResponse. With Filter, PerPage defaults to
// evaldelete.DefaultPageSize and InFlight to
// evaldelete.DefaultInFlight(PerPage): 4, fewer for pages over 100 evals.

// MaxPagesInFlight bounds api.EvalDeleteRequest.InFlight.
const MaxPagesInFlight = 64

// decodeEvalDelete reads and checks a delete body; every error names its
// field.
func decodeEvalDelete(r *http.Request, limit int64) (api.EvalDeleteRequest, error) {
	var req api.EvalDeleteRequest
	if err := commands.DecodeJSON(r.Body, limit, &req); err != nil {
		return req, err
	}
	return req, checkEvalDelete(&req)
}

func checkEvalDelete(req *api.EvalDeleteRequest) error {
	switch {
	case len(req.EvalIDs) > 0 && req.Filter != "":
		return commands.Invalid("EvalIDs", "evals cannot be deleted by both id and filter")
	case len(req.EvalIDs) == 0 && req.Filter == "":
		return commands.Invalid("Filter", "give EvalIDs or a Filter")
	case req.Filter != "":
		if _, err := evaldelete.Compile(req.Filter); err != nil {
			return commands.Invalid("Filter", "%v", err)
		}
	}
	if req.PerPage == 0 {
		req.PerPage = evaldelete.DefaultPageSize
	}
	if req.PerPage < 0 || req.PerPage > evaldelete.MaxPageSize {
		return commands.Invalid("PerPage", "must be between 1 and %d, is %d", evaldelete.MaxPageSize, req.PerPage)
	}
	if req.MaxPages < 0 {
		return commands.Invalid("MaxPages", "must not be negative")
	}
	if req.InFlight == 0 {
		req.InFlight = evaldelete.DefaultInFlight(req.PerPage)
	}
	if req.InFlight < 0 || req.InFlight > MaxPagesInFlight {
		return commands.Invalid("InFlight", "must be between 1 and %d, is %d", MaxPagesInFlight, req.InFlight)
	}
	if req.NextToken != "" {
		if _, err := order.ParseToken(req.NextToken); err != nil {
			return commands.Invalid("NextToken", "%q is not a token this server handed out", req.NextToken)
		}
	}
	return nil
}

// deleteEvals deletes evals by id (N6 decided at apply) or by filter, one
// page per entry with several pages in flight (N4, deletePages). Each
// entry stays short, so heartbeats, plans and leadership are never
// starved. Evals that start matching behind the cursor are not deleted.
func (s *Server) deleteEvals(w http.ResponseWriter, r *http.Request, m *gcMetrics) error {
	req, err := decodeEvalDelete(r, s.cfg.BodyLimit)
	if err != nil {
		return err
	}
	if len(req.EvalIDs) > 0 {
		out, err := s.cfg.Pipeline.Run(r.Context(), "eval.delete", request(r), eval.Delete{IDs: req.EvalIDs})
		if err != nil {
			return err
		}
		m.evalsDeleted.Add(float64(len(req.EvalIDs)))
		setIndex(w, out.Index)
		writeJSON(w, http.StatusOK, api.EvalDeleteResponse{Count: len(req.EvalIDs), Index: out.Index})
		return nil
	}
	resp, err := s.deletePages(r, req, m)
	if err != nil {
		return err
	}
	setIndex(w, resp.Index)
	writeJSON(w, http.StatusOK, resp)
	return nil
}

// countEvals answers GET /v1/evaluations/count: {"Count": n}, the evals
// of ?namespace (default "default", "*" for all) that ?filter selects, as
// Nomad's endpoint; a blocking query wakes on the evals table.
func (s *Server) countEvals(w http.ResponseWriter, r *http.Request) error {
	pq, err := parsePageQuery(r)
	if err != nil {
		return err
	}
	f, err := evaldelete.Compile(r.URL.Query().Get("filter"))
	if err != nil {
		return commands.Invalid("filter", "%v", err)
	}
	s.query(w, r, evalTables, func(v projections.View) (any, error) {
		n := 0
		err := evals.Scan(v, evals.Query{Namespace: pq.namespace, Prefix: pq.prefix}, func(e *evals.Eval) error {
			ok, err := evaldelete.Match(f, &e.Evaluation)
			if err != nil {
				return commands.Invalid("filter", "%v", err)
			}
			if ok {
				n++
			}
			return nil
		})
		return map[string]int{"Count": n}, err
	})
	return nil
}

// systemGC answers PUT /v1/system/gc: a forced collection (thresholds
// ignored, as Nomad's), run to completion one bounded entry at a time.
func (s *Server) systemGC(w http.ResponseWriter, r *http.Request) error {
	total, index, err := gc.Run(r.Context(), s.cfg.Pipeline, request(r).Actor, gc.Collect{Force: true})
	if err != nil {
		return err
	}
	s.cfg.Logger.Info("forced garbage collection", "collected", total.Total(), "evals", total.Evals,
		"allocs", total.Allocs, "jobs", total.Jobs, "nodes", total.Nodes, "deployments", total.Deployments, "index", index)
	setIndex(w, index)
	writeJSON(w, http.StatusOK, map[string]any{"Index": index, "Collected": total})
	return nil
}
