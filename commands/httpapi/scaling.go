package httpapi

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"

	"github.com/ordoplane/ordo/api"
	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/job"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/deployments"
	"github.com/ordoplane/ordo/projections/jobs"
	"github.com/ordoplane/ordo/projections/scaling"
)

// scalingRoutes registers Nomad's scale routes: a job's scale status and
// scaling requests, and the scaling policies its groups' scaling blocks
// declare.
func (s *Server) scalingRoutes() {
	s.handle("GET /v1/job/{id}/scale", s.leader(endpoint(s.jobScaleStatus)))
	s.handle("PUT /v1/job/{id}/scale", s.leader(endpoint(s.scaleJob)))
	s.handle("POST /v1/job/{id}/scale", s.leader(endpoint(s.scaleJob)))
	s.handle("GET /v1/scaling/policies", s.leader(endpoint(s.listScalingPolicies)))
	s.handle("GET /v1/scaling/policy/{id}", s.leader(endpoint(s.getScalingPolicy)))
}

// scaleStatusTables are what a scale status reads: the job, its summary,
// its deployments and its scaling events.
var scaleStatusTables = []string{jobs.Table, jobs.SummaryTable, deployments.Table, scaling.Table}

// jobScaleStatus answers Nomad's JobScaleStatusResponse: per group its
// count, the latest deployment's placed, healthy and unhealthy
// allocations, its running allocations and its scaling events.
func (s *Server) jobScaleStatus(w http.ResponseWriter, r *http.Request) error {
	ns, id, err := pathJob(r)
	if err != nil {
		return err
	}
	s.query(w, r, scaleStatusTables, func(v projections.View) (any, error) {
		j, err := jobs.Get(v, ns, id)
		if err != nil {
			return nil, notFoundJob(id, err)
		}
		sum, err := jobs.GetSummary(v, ns, id)
		if err != nil && !errors.Is(err, projections.ErrNotFound) {
			return nil, err
		}
		d, err := deployments.Latest(v, ns, id)
		if err != nil && !errors.Is(err, projections.ErrNotFound) {
			return nil, err
		}
		evs, err := scaling.Events(v, ns, id)
		if err != nil {
			return nil, err
		}
		resp := api.JobScaleStatusResponse{JobID: j.ID, Namespace: j.Namespace, JobCreateIndex: j.CreateIndex,
			JobModifyIndex: j.JobModifyIndex, JobStopped: j.Stop, TaskGroups: map[string]api.TaskGroupScaleStatus{}}
		for _, tg := range j.TaskGroups {
			st := api.TaskGroupScaleStatus{Desired: tg.Count, Events: []api.ScalingEvent{}}
			if sum != nil {
				st.Running = sum.Summary[tg.Name].Running
			}
			if d != nil && d.JobVersion == j.Version {
				if ds := d.TaskGroups[tg.Name]; ds != nil {
					st.Placed, st.Healthy, st.Unhealthy = ds.PlacedAllocs, ds.HealthyAllocs, ds.UnhealthyAllocs
				}
			}
			for _, e := range evs[tg.Name] {
				st.Events = append(st.Events, apiScalingEvent(e))
			}
			resp.TaskGroups[tg.Name] = st
		}
		return resp, nil
	})
	return nil
}

func apiScalingEvent(e scaling.Event) api.ScalingEvent {
	out := api.ScalingEvent{Count: e.Count, PreviousCount: e.PreviousCount, Error: e.Error, Message: e.Message,
		Meta: e.Meta, Time: uint64(e.Time), CreateIndex: e.CreateIndex}
	if e.EvalID != "" {
		out.EvalID = &e.EvalID
	}
	return out
}

// scaleJob runs a scaling request, as Nomad's PUT /v1/job/:id/scale.
// PolicyOverride is accepted and ignored (ordo has no Sentinel).
func (s *Server) scaleJob(w http.ResponseWriter, r *http.Request) error {
	ns, id, err := pathJob(r)
	if err != nil {
		return err
	}
	var body api.ScalingRequest
	if err := commands.DecodeJSON(r.Body, s.cfg.BodyLimit, &body); err != nil {
		return err
	}
	if j := body.Target["Job"]; j != "" && j != id {
		return commands.Invalid("Target.Job", "%q does not match the id in the path, %q", j, id)
	}
	cmd := &job.Scale{Namespace: ns, ID: id, Group: body.Target["Group"], Count: body.Count, Message: body.Message,
		Error: body.Error, Meta: body.Meta, JobModifyIndex: body.JobModifyIndex}
	out, err := s.runJobCommand(r, "job.scale", cmd, body.JobModifyIndex == 0)
	if err != nil {
		return err
	}
	return writeJobAnswer(w, out, cmd.Result())
}

// listScalingPolicies lists the scaling blocks of the jobs in ?namespace
// ("*": every namespace), by job then group, as Nomad's
// ScalingPolicyListStubs; ?job keeps one job's, ?type one type's.
func (s *Server) listScalingPolicies(w http.ResponseWriter, r *http.Request) error {
	ns, err := jobNamespace(r)
	if err != nil {
		return err
	}
	jobID, typ := r.URL.Query().Get("job"), r.URL.Query().Get("type")
	if jobID != "" {
		if err := job.ValidID("job", jobID); err != nil {
			return err
		}
	}
	s.query(w, r, []string{jobs.Table}, func(v projections.View) (any, error) {
		out := []api.ScalingPolicyListStub{}
		err := scalingPolicies(v, ns, func(p *api.ScalingPolicy) bool {
			if (jobID == "" || p.Target["Job"] == jobID) && (typ == "" || p.Type == typ) {
				out = append(out, api.ScalingPolicyListStub{ID: p.ID, Enabled: p.Enabled, Type: p.Type, Target: p.Target,
					CreateIndex: p.CreateIndex, ModifyIndex: p.ModifyIndex})
			}
			return true
		})
		return out, err
	})
	return nil
}

// getScalingPolicy answers one scaling policy of ?namespace ("*": of any).
func (s *Server) getScalingPolicy(w http.ResponseWriter, r *http.Request) error {
	ns, err := jobNamespace(r)
	if err != nil {
		return err
	}
	id := r.PathValue("id")
	s.query(w, r, []string{jobs.Table}, func(v projections.View) (any, error) {
		var found *api.ScalingPolicy
		err := scalingPolicies(v, ns, func(p *api.ScalingPolicy) bool {
			if p.ID == id {
				found = p
			}
			return found == nil
		})
		if err == nil && found == nil {
			err = &commands.NotFoundError{Kind: "scaling policy", ID: id}
		}
		return found, err
	})
	return nil
}

// errStopScan ends a scan of scaling policies early.
var errStopScan = errors.New("stop")

// scalingPolicies calls fn with the policy of each group with a scaling
// block among the jobs of ns, until fn returns false. A stopped job's
// policies are disabled, as Nomad disables them.
func scalingPolicies(v projections.View, ns string, fn func(*api.ScalingPolicy) bool) error {
	err := jobs.Scan(v, jobs.Query{Namespace: ns}, func(st *jobs.Stub) error {
		j, err := jobs.Get(v, st.Namespace, st.ID)
		if err != nil {
			return err
		}
		for i := range j.TaskGroups {
			tg := &j.TaskGroups[i]
			if tg.Scaling == nil {
				continue
			}
			if !fn(scalingPolicy(j, tg)) {
				return errStopScan
			}
		}
		return nil
	})
	if errors.Is(err, errStopScan) {
		return nil
	}
	return err
}

// scalingPolicy returns group tg's scaling block as Nomad's ScalingPolicy.
// Its id is derived from the namespace, job and group, so it stays the
// same across the job's versions, as Nomad keeps it.
func scalingPolicy(j *jobs.Job, tg *events.TaskGroup) *api.ScalingPolicy {
	sc := tg.Scaling
	return &api.ScalingPolicy{ID: policyID(j.Namespace, j.ID, tg.Name), Namespace: j.Namespace, Type: sc.Type,
		Target: map[string]string{"Namespace": j.Namespace, "Job": j.ID, "Group": tg.Name},
		Min:    sc.Min, Max: sc.Max, Policy: map[string]any(sc.Policy), Enabled: sc.Enabled && !j.Stop,
		CreateIndex: j.CreateIndex, ModifyIndex: j.JobModifyIndex}
}

// policyID is a UUID-shaped id of the scaling policy of group in job id of
// ns.
func policyID(ns, id, group string) string {
	sum := sha256.Sum256([]byte(ns + "\x00" + id + "\x00" + group))
	h := hex.EncodeToString(sum[:16])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}
