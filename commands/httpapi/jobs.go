package httpapi

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/ordoplane/ordo/api"
	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/acl/policy"
	"github.com/ordoplane/ordo/commands/job"
	"github.com/ordoplane/ordo/commands/job/jobspec"
	"github.com/ordoplane/ordo/commands/namespace"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/jobs"
	"github.com/ordoplane/ordo/projections/namespaces"
)

// jobRoutes registers Nomad's job API: list, register, read, stop or
// purge, summary, versions, dispatch, parse, plan and periodic force.
func (s *Server) jobRoutes() {
	s.handle("GET /v1/jobs", s.leader(endpoint(s.listJobs)))
	s.handle("PUT /v1/jobs", s.leader(endpoint(s.registerJob)))
	s.handle("POST /v1/jobs", s.leader(endpoint(s.registerJob)))
	s.handle("PUT /v1/jobs/parse", endpoint(s.parseJob))
	s.handle("POST /v1/jobs/parse", endpoint(s.parseJob))
	s.handle("GET /v1/job/{id}", s.leader(endpoint(s.getJob)))
	s.handle("PUT /v1/job/{id}", s.leader(endpoint(s.registerJob)))
	s.handle("POST /v1/job/{id}", s.leader(endpoint(s.registerJob)))
	s.handle("DELETE /v1/job/{id}", s.leader(endpoint(s.deregisterJob)))
	s.handle("GET /v1/job/{id}/summary", s.leader(endpoint(s.jobSummary)))
	s.handle("GET /v1/job/{id}/versions", s.leader(endpoint(s.jobVersions)))
	s.handle("PUT /v1/job/{id}/dispatch", s.leader(endpoint(s.dispatchJob)))
	s.handle("POST /v1/job/{id}/dispatch", s.leader(endpoint(s.dispatchJob)))
	s.handle("PUT /v1/job/{id}/plan", s.leader(endpoint(s.planJob)))  // jobplan.go
	s.handle("POST /v1/job/{id}/plan", s.leader(endpoint(s.planJob))) // jobplan.go
	s.handle("PUT /v1/job/{id}/periodic/force", s.leader(endpoint(s.forcePeriodic)))
	s.handle("POST /v1/job/{id}/periodic/force", s.leader(endpoint(s.forcePeriodic)))
}

// A job's status derives from its summary, so reads of a job wake on both.
var (
	jobTables        = []string{jobs.Table, jobs.SummaryTable, jobs.VersionsTable} // versions: Stable
	jobSummaryTables = []string{jobs.SummaryTable}
)

// maxJobRetries bounds how often a register, stop or dispatch is decided
// again after its decision went stale (another change to the job landed
// in between), when the caller asked for no check-and-set.
const maxJobRetries = 3

// jobNamespace returns the ?namespace= of r, "default" when absent.
func jobNamespace(r *http.Request) (string, error) {
	ns := r.URL.Query().Get("namespace")
	if ns == "" {
		return namespaces.Default, nil
	}
	if ns == jobs.AllNamespaces {
		return ns, nil
	}
	return ns, namespace.ValidName("namespace", ns)
}

// pathJob returns the namespace and the job id in r's path.
func pathJob(r *http.Request) (string, string, error) {
	ns, err := jobNamespace(r)
	if err != nil {
		return "", "", err
	}
	if ns == jobs.AllNamespaces {
		return "", "", commands.Invalid("namespace", "a job is read in one namespace, not %q", ns)
	}
	id := r.PathValue("id")
	return ns, id, job.ValidID("id", id)
}

func jobQueryInt(r *http.Request, name string) (int, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, commands.Invalid(name, "%q is not an integer", v)
	}
	return n, nil
}

// listJobs lists jobs by namespace then id, as Nomad does, paged with
// next_token "<namespace>.<id>" and filtered on the stubs' JSON (Meta
// included, whether or not ?meta=true shows it).
func (s *Server) listJobs(w http.ResponseWriter, r *http.Request) error {
	ns, err := jobNamespace(r)
	if err != nil {
		return err
	}
	withMeta, err := queryBool(r, "meta")
	if err != nil {
		return err
	}
	pq, err := parsePage(r, jobTokenKey)
	if err != nil {
		return err
	}
	s.queryPage(w, r, jobTables, func(v projections.View) (any, error) {
		p := newPager(pq)
		err := jobs.Scan(v, jobs.Query{Namespace: ns, Prefix: pq.prefix, From: pq.from, Reverse: pq.reverse},
			func(j *jobs.Stub) error { return p.addToken(jobToken(j.Namespace, j.ID), j) })
		if !withMeta {
			for _, j := range p.items {
				j.(*jobs.Stub).Meta = nil
			}
		}
		return p.result(err)
	})
	return nil
}

// jobToken is the page token of a job, "<namespace>.<id>" as Nomad's.
func jobToken(ns, id string) string { return ns + "." + id }

// jobTokenKey returns the jobs.Key a jobToken names. Namespaces have no
// dots, so the first one ends the namespace.
func jobTokenKey(token string) (string, bool) {
	ns, id, ok := strings.Cut(token, ".")
	if !ok || namespace.ValidName("next_token", ns) != nil || job.ValidID("next_token", id) != nil {
		return "", false
	}
	return jobs.Key(ns, id), true
}

func notFoundJob(id string, err error) error {
	if errors.Is(err, projections.ErrNotFound) {
		return &commands.NotFoundError{Kind: "job", ID: id}
	}
	return err
}

func (s *Server) getJob(w http.ResponseWriter, r *http.Request) error {
	ns, id, err := pathJob(r)
	if err != nil {
		return err
	}
	s.query(w, r, jobTables, func(v projections.View) (any, error) {
		j, err := jobs.Get(v, ns, id)
		return j, notFoundJob(id, err)
	})
	return nil
}

func (s *Server) jobSummary(w http.ResponseWriter, r *http.Request) error {
	ns, id, err := pathJob(r)
	if err != nil {
		return err
	}
	s.query(w, r, jobSummaryTables, func(v projections.View) (any, error) {
		sum, err := jobs.GetSummary(v, ns, id)
		return sum, notFoundJob(id, err)
	})
	return nil
}

// jobVersionsResponse is Nomad's JobVersionsResponse; Diffs with ?diffs
// (jobverbs.go).
type jobVersionsResponse struct {
	Versions []*jobs.Job
	Diffs    []any
}

func (s *Server) jobVersions(w http.ResponseWriter, r *http.Request) error {
	ns, id, err := pathJob(r)
	if err != nil {
		return err
	}
	diffs, err := queryBool(r, "diffs")
	if err != nil {
		return err
	}
	s.query(w, r, jobTables, func(v projections.View) (any, error) {
		vs, err := jobs.Versions(v, ns, id)
		if err != nil {
			return nil, notFoundJob(id, err)
		}
		resp := jobVersionsResponse{Versions: vs}
		if diffs {
			resp.Diffs, err = s.versionDiffs(vs, r.URL.Query().Get("diff_version"))
		}
		return resp, err
	})
	return nil
}

// jobRegisterRequest is Nomad's api.JobRegisterRequest; the fields ordo
// does not act on (PolicyOverride, PreserveCounts, Submission, …) are
// accepted and ignored.
type jobRegisterRequest struct {
	Job            json.RawMessage
	EnforceIndex   bool
	JobModifyIndex uint64
	EvalPriority   int
}

// decodeJobBody parses the Job of a register body with jobspec.ParseJSON. A
// job that names no namespace takes the request's ?namespace=.
func decodeJobBody(r *http.Request, raw json.RawMessage, limit int64) (*events.Job, error) {
	if len(bytes.TrimSpace(raw)) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return nil, commands.Invalid("Job", "missing")
	}
	spec, err := jobspec.ParseJSON(bytes.NewReader(raw), limit)
	if err != nil {
		return nil, err
	}
	var named struct{ Namespace *string }
	_ = json.Unmarshal(raw, &named)
	if named.Namespace == nil || *named.Namespace == "" {
		if ns, err := jobNamespace(r); err != nil {
			return nil, err
		} else if ns != jobs.AllNamespaces {
			spec.Namespace = ns
		}
	}
	return spec, nil
}

func (s *Server) registerJob(w http.ResponseWriter, r *http.Request) error {
	var body jobRegisterRequest
	if err := commands.DecodeJSON(r.Body, s.cfg.BodyLimit, &body); err != nil {
		return err
	}
	spec, err := decodeJobBody(r, body.Job, s.cfg.BodyLimit)
	if err != nil {
		return err
	}
	if err := s.authorizeNamespace(r, spec.Namespace, policy.CapSubmitJob); err != nil { // authz.go
		return err
	}
	if id := r.PathValue("id"); id != "" && id != spec.ID {
		return commands.Invalid("job.id", "%q does not match the id in the path, %q", spec.ID, id)
	}
	cmd := &job.Register{Job: *spec, EnforceIndex: body.EnforceIndex, JobModifyIndex: body.JobModifyIndex,
		EvalPriority: body.EvalPriority, Management: s.isManagement(r)} // schedconfig.go: RejectJobRegistration spares management
	out, err := s.runJobCommand(r, "job.register", cmd, !body.EnforceIndex)
	if err != nil {
		return err
	}
	res := cmd.Result()
	resp := api.JobRegisterResponse{EvalID: res.EvalID, JobModifyIndex: res.JobModifyIndex, Index: out.Index,
		Duplicate: out.Duplicate}
	if res.Changed {
		resp.JobModifyIndex = out.Index
	}
	if res.EvalID != "" {
		resp.EvalCreateIndex = out.Index
	}
	if out.Duplicate {
		resp.JobModifyIndex = s.jobModifyIndex(spec.Namespace, spec.ID, out.Index)
	}
	setIndex(w, out.Index)
	writeJSON(w, http.StatusOK, resp)
	return nil
}

// jobModifyIndex answers a retried registration that committed at index
// at: the job's JobModifyIndex as of that index (its newest version
// written at or before it), not a later registration's; 0 when the job
// is gone.
func (s *Server) jobModifyIndex(ns, id string, at uint64) uint64 {
	snap := s.cfg.FSM.Store().Snapshot()
	defer snap.Close()
	versions, err := jobs.Versions(projections.NewView(snap), ns, id)
	if err != nil {
		return 0
	}
	for _, j := range versions { // newest first
		if j.JobModifyIndex <= at {
			return j.JobModifyIndex
		}
	}
	return at
}

// runJobCommand runs cmd, deciding it again when retry is set and its
// decision went stale before it applied.
func (s *Server) runJobCommand(r *http.Request, name string, cmd commands.Command, retry bool) (commands.Outcome, error) {
	req := request(r)
	for attempt := 1; ; attempt++ {
		out, err := s.cfg.Pipeline.Run(r.Context(), name, req, cmd)
		var ce *commands.ConflictError
		if err == nil || !retry || req.CommandID != "" || !errors.As(err, &ce) || attempt >= maxJobRetries {
			return out, err
		}
	}
}

// deregisterJob stops or (?purge=true) removes a job; ?no_shutdown_delay
// (N23) and ?eval_priority are Nomad's; ?global is accepted and ignored.
func (s *Server) deregisterJob(w http.ResponseWriter, r *http.Request) error {
	ns, id, err := pathJob(r)
	if err != nil {
		return err
	}
	cmd := &job.Deregister{Namespace: ns, ID: id}
	if cmd.Purge, err = queryBool(r, "purge"); err == nil {
		if cmd.NoShutdownDelay, err = queryBool(r, "no_shutdown_delay"); err == nil {
			if _, err = queryBool(r, "global"); err == nil {
				cmd.EvalPriority, err = jobQueryInt(r, "eval_priority")
			}
		}
	}
	if err != nil {
		return err
	}
	out, err := s.runJobCommand(r, "job.deregister", cmd, true)
	if err != nil {
		return err
	}
	res := cmd.Result()
	resp := api.JobDeregisterResponse{EvalID: res.EvalID, JobModifyIndex: res.JobModifyIndex, Index: out.Index,
		Duplicate: out.Duplicate}
	if res.Changed {
		resp.JobModifyIndex = out.Index
	}
	if res.EvalID != "" {
		resp.EvalCreateIndex = out.Index
	}
	setIndex(w, out.Index)
	writeJSON(w, http.StatusOK, resp)
	return nil
}

// jobDispatchRequest is Nomad's api.JobDispatchRequest; Payload is base64
// in JSON.
type jobDispatchRequest struct {
	JobID            string
	Payload          string
	Meta             map[string]string
	IdPrefixTemplate string
	Priority         int
}

func (s *Server) dispatchJob(w http.ResponseWriter, r *http.Request) error {
	ns, id, err := pathJob(r)
	if err != nil {
		return err
	}
	var body jobDispatchRequest
	if err := s.decodeJobWrite(r, id, &body.JobID, &body, true); err != nil { // jobverbs.go
		return err
	}
	payload, err := base64.StdEncoding.DecodeString(body.Payload)
	if err != nil {
		return commands.Invalid("Payload", "not base64: %v", err)
	}
	cmd := &job.Dispatch{Namespace: ns, ID: id, Meta: body.Meta, Payload: payload, EvalPriority: body.Priority,
		IDPrefixTemplate: body.IdPrefixTemplate}
	out, err := s.runJobCommand(r, "job.dispatch", cmd, true)
	if err != nil {
		return err
	}
	res := cmd.Result()
	resp := api.JobDispatchResponse{DispatchedJobID: res.JobID, EvalID: res.EvalID, JobCreateIndex: out.Index, Index: out.Index}
	if res.EvalID != "" {
		resp.EvalCreateIndex = out.Index
	}
	setIndex(w, out.Index)
	writeJSON(w, http.StatusOK, resp)
	return nil
}

// jobsParseRequest is Nomad's api.JobsParseRequest. HCL variables are not
// supported; Canonicalize is accepted and the answer is always canonical.
type jobsParseRequest struct {
	JobHCL       string
	Variables    string
	Canonicalize bool
}

// parseJob turns HCL into the job's JSON, as Nomad's /v1/jobs/parse. It
// reads nothing from the state, so any server answers it.
func (s *Server) parseJob(w http.ResponseWriter, r *http.Request) error {
	var body jobsParseRequest
	if err := commands.DecodeJSON(r.Body, s.cfg.BodyLimit, &body); err != nil {
		return err
	}
	if body.JobHCL == "" {
		return commands.Invalid("JobHCL", "must not be empty")
	}
	if body.Variables != "" {
		return commands.Invalid("Variables", "HCL variables are not supported")
	}
	spec, err := jobspec.ParseHCL("input.hcl", []byte(body.JobHCL))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, spec)
	return nil
}
