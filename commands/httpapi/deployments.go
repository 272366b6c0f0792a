package httpapi

import (
	"errors"
	"net/http"

	"github.com/ordoplane/ordo/api"
	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/acl/policy"
	"github.com/ordoplane/ordo/commands/deployment"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/deployments"
	"github.com/ordoplane/ordo/projections/evals"
	"github.com/ordoplane/ordo/projections/jobs"
)

var deploymentTables = []string{deployments.Table}

// listDeployments lists deployments in creation order, oldest first (N20).
func (s *Server) listDeployments(w http.ResponseWriter, r *http.Request) error {
	pq, err := parsePageQuery(r)
	if err != nil {
		return err
	}
	s.queryPage(w, r, deploymentTables, func(v projections.View) (any, error) {
		p := newPager(pq)
		err := deployments.Scan(v, deployments.Query{Namespace: pq.namespace, Prefix: pq.prefix, Reverse: pq.reverse, From: pq.from},
			func(d *deployments.Deployment) error { return p.add(d.CreateIndex, d.ID, d) })
		return p.result(err)
	})
	return nil
}

// jobDeployments answers a job's deployments newest first, as Nomad's
// /v1/job/:id/deployments does.
func (s *Server) jobDeployments(w http.ResponseWriter, r *http.Request) error {
	id, ns := r.PathValue("id"), queryNamespace(r)
	s.query(w, r, deploymentTables, func(v projections.View) (any, error) {
		list, err := deployments.ByJob(v, ns, id)
		out := make([]*deployments.Deployment, 0, len(list))
		for i := len(list) - 1; i >= 0; i-- {
			out = append(out, list[i])
		}
		return out, err
	})
	return nil
}

// jobLatestDeployment answers a job's most recent deployment, or null when
// it has none, as Nomad's /v1/job/:id/deployment does.
func (s *Server) jobLatestDeployment(w http.ResponseWriter, r *http.Request) error {
	id, ns := r.PathValue("id"), queryNamespace(r)
	s.query(w, r, deploymentTables, func(v projections.View) (any, error) {
		d, err := deployments.Latest(v, ns, id)
		if errors.Is(err, projections.ErrNotFound) {
			return nil, nil
		}
		return d, err
	})
	return nil
}

func (s *Server) getDeployment(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	s.query(w, r, deploymentTables, func(v projections.View) (any, error) {
		return s.readDeployment(v, r, id) // deploymentallocs.go
	})
	return nil
}

// deploymentRequest is the body of Nomad's deployment promote, fail and
// pause requests (api.DeploymentPromoteRequest and friends).
type deploymentRequest struct {
	DeploymentID string
	All          bool
	Groups       []string
	Pause        bool
}

func (s *Server) promoteDeployment(w http.ResponseWriter, r *http.Request) error {
	return s.deploymentWrite(w, r, "deployment.promote", func(id string, b deploymentRequest) commands.Command {
		return deployment.Promote{ID: id, All: b.All, Groups: b.Groups}
	})
}

func (s *Server) failDeployment(w http.ResponseWriter, r *http.Request) error {
	return s.deploymentWrite(w, r, "deployment.fail", func(id string, _ deploymentRequest) commands.Command {
		return deployment.Fail{ID: id}
	})
}

func (s *Server) pauseDeployment(w http.ResponseWriter, r *http.Request) error {
	return s.deploymentWrite(w, r, "deployment.pause", func(id string, b deploymentRequest) commands.Command {
		return deployment.Pause{ID: id, Pause: b.Pause}
	})
}

// deploymentWrite decodes a deployment request (an empty body is allowed;
// a DeploymentID in it must match the path), runs the command and answers
// the eval it created, if any.
func (s *Server) deploymentWrite(w http.ResponseWriter, r *http.Request, name string, build func(string, deploymentRequest) commands.Command) error {
	var body deploymentRequest
	if r.ContentLength != 0 {
		if err := commands.DecodeJSON(r.Body, s.cfg.BodyLimit, &body); err != nil {
			return err
		}
	}
	id, err := pathID(r)
	if err != nil {
		return err
	}
	if body.DeploymentID != "" && body.DeploymentID != id {
		return commands.Invalid("DeploymentID", "%q does not match the id in the path, %q", body.DeploymentID, id)
	}
	if s.cfg.ACL != nil { // authorized against the deployment's own namespace
		snap := s.cfg.FSM.Store().Snapshot()
		d, err := deployments.Get(projections.NewView(snap), id)
		snap.Close()
		if err == nil {
			err = s.authorizeNamespace(r, d.Namespace, policy.CapSubmitJob)
		}
		if err != nil && !errors.Is(err, projections.ErrNotFound) {
			return err
		}
	}
	out, err := s.cfg.Pipeline.Run(r.Context(), name, request(r), build(id, body))
	if err != nil {
		return err
	}
	resp := api.DeploymentUpdateResponse{DeploymentModifyIndex: out.Index, Index: out.Index}
	snap := s.cfg.FSM.Store().Snapshot()
	v := projections.NewView(snap)
	if d, err := deployments.Get(v, id); err == nil {
		// A revert registers the job in the same entry; its eval is the
		// registration's.
		reverted := false
		if j, err := jobs.Get(v, d.Namespace, d.JobID); err == nil && j.JobModifyIndex == out.Index && j.Version != d.JobVersion {
			if stable, ok, err := deployment.StableVersion(v, &d.Deployment); err == nil && ok {
				reverted, resp.RevertedJobVersion = true, &stable.Version
			}
		}
		if list, err := evals.ByJob(v, d.Namespace, d.JobID); err == nil {
			for _, e := range list {
				if e.CreateIndex == out.Index && (e.DeploymentID == id || reverted) {
					resp.EvalID, resp.EvalCreateIndex = e.ID, e.CreateIndex
				}
			}
		}
	}
	snap.Close()
	setIndex(w, out.Index)
	writeJSON(w, http.StatusOK, resp)
	return nil
}
