package httpapi

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/ordoplane/ordo/api"
	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/job"
	"github.com/ordoplane/ordo/projections"
)

// errNoPlanner answers a plan on a server built without a planner.
var errNoPlanner = errors.New("ordo: this server does not plan jobs")

// jobPlanRequest is Nomad's api.JobPlanRequest; PolicyOverride is accepted
// and ignored (ordo has no Sentinel policies).
type jobPlanRequest struct {
	Job            json.RawMessage
	Diff           bool
	PolicyOverride bool
}

// planJob answers what registering the body's job would do, as Nomad's
// /v1/job/:id/plan: nothing is appended. X-Nomad-Index is the snapshot's
// applied index.
func (s *Server) planJob(w http.ResponseWriter, r *http.Request) error {
	var body jobPlanRequest
	if err := commands.DecodeJSON(r.Body, s.cfg.BodyLimit, &body); err != nil {
		return err
	}
	spec, err := decodeJobBody(r, body.Job, s.cfg.BodyLimit)
	if err != nil {
		return err
	}
	if id := r.PathValue("id"); id != spec.ID {
		return commands.Invalid("job.id", "%q does not match the id in the path, %q", spec.ID, id)
	}
	if s.cfg.JobPlanner == nil {
		return notImplemented{errNoPlanner}
	}
	snap := s.cfg.FSM.Store().Snapshot()
	defer snap.Close()
	v := projections.NewView(snap)
	index, err := v.AppliedIndex()
	if err != nil {
		return err
	}
	resp, err := s.cfg.JobPlanner.PlanJob(v, spec, body.Diff)
	if err != nil {
		return err
	}
	setIndex(w, index)
	writeJSON(w, http.StatusOK, resp)
	return nil
}

// forcePeriodic launches a periodic job's child now, as Nomad's
// /v1/job/:id/periodic/force, even if the job prohibits overlap.
func (s *Server) forcePeriodic(w http.ResponseWriter, r *http.Request) error {
	ns, id, err := pathJob(r)
	if err != nil {
		return err
	}
	cmd := &job.LaunchPeriodic{Namespace: ns, ID: id, Force: true}
	out, err := s.runJobCommand(r, "job.periodic.force", cmd, true)
	if err != nil {
		return err
	}
	res := cmd.Result()
	resp := api.PeriodicForceResponse{EvalID: res.EvalID, Index: out.Index, DispatchedJobID: res.JobID}
	if res.EvalID != "" {
		resp.EvalCreateIndex = out.Index
	}
	setIndex(w, out.Index)
	writeJSON(w, http.StatusOK, resp)
	return nil
}
