package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"github.com/ordoplane/ordo/api"
	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/acl/policy"
	"github.com/ordoplane/ordo/commands/job"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections/jobs"
)

// jobVerbRoutes registers Nomad's job verbs beyond register and stop:
// validate, evaluate, revert, stable, and the scale routes (scaling.go).
func (s *Server) jobVerbRoutes() {
	s.handle("PUT /v1/validate/job", endpoint(s.validateJob))
	s.handle("POST /v1/validate/job", endpoint(s.validateJob))
	s.handle("PUT /v1/job/{id}/evaluate", s.leader(endpoint(s.evaluateJob)))
	s.handle("POST /v1/job/{id}/evaluate", s.leader(endpoint(s.evaluateJob)))
	s.handle("PUT /v1/job/{id}/revert", s.leader(endpoint(s.revertJob)))
	s.handle("POST /v1/job/{id}/revert", s.leader(endpoint(s.revertJob)))
	s.handle("PUT /v1/job/{id}/stable", s.leader(endpoint(s.stableJob)))
	s.handle("POST /v1/job/{id}/stable", s.leader(endpoint(s.stableJob)))
	s.scalingRoutes() // scaling.go
}

// validateJob validates the body's job as registering it would, as
// Nomad's /v1/validate/job: a job that fails is answered 200 with its
// errors (ValidationErrors, Error); a body with no job is a 400. It reads
// nothing from the state, so any server answers it.
func (s *Server) validateJob(w http.ResponseWriter, r *http.Request) error {
	var body struct{ Job json.RawMessage }
	if err := commands.DecodeJSON(r.Body, s.cfg.BodyLimit, &body); err != nil {
		return err
	}
	ns, err := jobNamespace(r)
	if err != nil {
		return err
	}
	if raw := bytes.TrimSpace(body.Job); len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return commands.Invalid("Job", "must be specified")
	}
	spec, err := decodeJobBody(r, body.Job, s.cfg.BodyLimit)
	var resp api.JobValidateResponse
	var ve *commands.ValidationError
	switch {
	case errors.As(err, &ve):
		resp.ValidationErrors, resp.Error = []string{ve.Error()}, ve.Error()
	case err != nil:
		return err
	default:
		ns = spec.Namespace
	}
	if ns == jobs.AllNamespaces {
		ns = "default"
	}
	if err := s.authorizeNamespace(r, ns, policy.CapReadJob); err != nil { // authz.go
		return err
	}
	writeJSON(w, http.StatusOK, resp)
	return nil
}

// jobEvaluateRequest is Nomad's api.JobEvaluateRequest.
type jobEvaluateRequest struct {
	JobID       string
	EvalOptions struct{ ForceReschedule bool }
}

// evaluateJob creates a new evaluation of the job, as Nomad's
// /v1/job/:id/evaluate; the body is optional.
func (s *Server) evaluateJob(w http.ResponseWriter, r *http.Request) error {
	ns, id, err := pathJob(r)
	if err != nil {
		return err
	}
	var body jobEvaluateRequest
	if err := s.decodeJobWrite(r, id, &body.JobID, &body, true); err != nil {
		return err
	}
	cmd := &job.Evaluate{Namespace: ns, ID: id, ForceReschedule: body.EvalOptions.ForceReschedule}
	out, err := s.runJobCommand(r, "job.evaluate", cmd, true)
	if err != nil {
		return err
	}
	return writeJobAnswer(w, out, cmd.Result())
}

// jobRevertRequest is Nomad's api.JobRevertRequest; ConsulToken and
// VaultToken are accepted and ignored.
type jobRevertRequest struct {
	JobID               string
	JobVersion          *uint64
	EnforcePriorVersion *uint64
	ConsulToken         string
	VaultToken          string
}

// revertJob registers a prior version of the job again, as Nomad's
// /v1/job/:id/revert.
func (s *Server) revertJob(w http.ResponseWriter, r *http.Request) error {
	ns, id, err := pathJob(r)
	if err != nil {
		return err
	}
	var body jobRevertRequest
	if err := s.decodeJobWrite(r, id, &body.JobID, &body, false); err != nil {
		return err
	}
	if body.JobVersion == nil {
		return commands.Invalid("JobVersion", "must name the version to revert to")
	}
	cmd := &job.Revert{Namespace: ns, ID: id, Version: *body.JobVersion, EnforcePriorVersion: body.EnforcePriorVersion}
	out, err := s.runJobCommand(r, "job.revert", cmd, body.EnforcePriorVersion == nil)
	if err != nil {
		return err
	}
	return writeJobAnswer(w, out, cmd.Result())
}

// jobStabilityRequest is Nomad's api.JobStabilityRequest.
type jobStabilityRequest struct {
	JobID      string
	JobVersion *uint64
	Stable     bool
}

// stableJob marks a version of the job stable or not, as Nomad's
// /v1/job/:id/stable; JobModifyIndex is the index of the change.
func (s *Server) stableJob(w http.ResponseWriter, r *http.Request) error {
	ns, id, err := pathJob(r)
	if err != nil {
		return err
	}
	var body jobStabilityRequest
	if err := s.decodeJobWrite(r, id, &body.JobID, &body, false); err != nil {
		return err
	}
	if body.JobVersion == nil {
		return commands.Invalid("JobVersion", "must name the version")
	}
	cmd := &job.Stability{Namespace: ns, ID: id, Version: *body.JobVersion, Stable: body.Stable}
	out, err := s.runJobCommand(r, "job.stable", cmd, true)
	if err != nil {
		return err
	}
	setIndex(w, out.Index)
	writeJSON(w, http.StatusOK, api.JobStabilityResponse{JobModifyIndex: out.Index, Index: out.Index})
	return nil
}

// decodeJobWrite decodes the body of a write to job id into body, whose
// JobID field is jobID: an empty JobID is id, another is a 400. With
// optional, an empty body is no fields.
func (s *Server) decodeJobWrite(r *http.Request, id string, jobID *string, body any, optional bool) error {
	if !optional || r.ContentLength != 0 {
		if err := commands.DecodeJSON(r.Body, s.cfg.BodyLimit, body); err != nil {
			return err
		}
	}
	if *jobID != "" && *jobID != id {
		return commands.Invalid("JobID", "%q does not match the id in the path, %q", *jobID, id)
	}
	return nil
}

// writeJobAnswer answers a job write that may register the job and create
// an evaluation with Nomad's JobRegisterResponse, from the write's own
// outcome: a changed spec's JobModifyIndex and the evaluation's create
// index are the entry's index.
func writeJobAnswer(w http.ResponseWriter, out commands.Outcome, res job.Result) error {
	resp := api.JobRegisterResponse{EvalID: res.EvalID, JobModifyIndex: res.JobModifyIndex, Index: out.Index,
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

// versionDiffs returns Nomad's Diffs of a versions answer: each version
// (newest first) against the one before it, or with diffVersion every
// other version against that one. It needs the planner's diff (hooks.go).
func (s *Server) versionDiffs(vs []*jobs.Job, diffVersion string) ([]any, error) {
	differ, ok := s.cfg.JobPlanner.(JobDiffer)
	if !ok {
		return nil, notImplemented{errNoPlanner}
	}
	if diffVersion == "" {
		out := []any{}
		for i := 0; i+1 < len(vs); i++ {
			out = append(out, differ.DiffJobs(&vs[i+1].Job, &vs[i].Job))
		}
		return out, nil
	}
	n, err := strconv.ParseUint(diffVersion, 10, 64)
	if err != nil {
		return nil, commands.Invalid("diff_version", "%q is not a version", diffVersion)
	}
	var base *events.Job
	for _, j := range vs {
		if j.Version == n {
			base = &j.Job
		}
	}
	if base == nil {
		return nil, commands.Invalid("diff_version", "the job has no version %d", n)
	}
	out := []any{}
	for _, j := range vs {
		if j.Version != n {
			out = append(out, differ.DiffJobs(base, &j.Job))
		}
	}
	return out, nil
}

// JobDiffer diffs two versions of a job for /v1/job/:id/versions?diffs;
// processors/jobplan's Planner implements it beside JobPlanner.
type JobDiffer interface {
	// DiffJobs returns Nomad's JobDiff of newJob against oldJob.
	DiffJobs(oldJob, newJob *events.Job) any
}
