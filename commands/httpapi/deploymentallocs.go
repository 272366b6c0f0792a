package httpapi

import (
	"errors"
	"net/http"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/acl/policy"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/allocs"
	"github.com/ordoplane/ordo/projections/deployments"
)

// deploymentAllocTables: a deployment's allocations, and the deployment
// for its job and namespace.
var deploymentAllocTables = []string{allocs.Table, deployments.Table}

// deploymentAllocRoutes serves Nomad's GET /v1/deployment/allocations/:id.
func (s *Server) deploymentAllocRoutes() {
	s.handle("GET /v1/deployment/allocations/{id}", s.leader(endpoint(s.deploymentAllocs)))
}

// deploymentAllocs answers the allocations placed under a deployment, as
// stubs oldest first, as Nomad's Deployment.Allocations does; the
// deployment is named by id or unique prefix and authorized in its own
// namespace.
func (s *Server) deploymentAllocs(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	s.query(w, r, deploymentAllocTables, func(v projections.View) (any, error) {
		d, err := s.readDeployment(v, r, id)
		if err != nil {
			return nil, err
		}
		list, err := allocs.ByJob(v, d.Namespace, d.JobID)
		mine := list[:0]
		for _, a := range list {
			if a.DeploymentID == d.ID {
				mine = append(mine, a)
			}
		}
		return stubs(mine, err)
	})
	return nil
}

// readDeployment returns the deployment named by id or unique prefix, once
// the caller may read jobs in its namespace: a 404 for none, a 400 for an
// ambiguous prefix.
func (s *Server) readDeployment(v projections.View, r *http.Request, id string) (*deployments.Deployment, error) {
	d, err := deployments.Resolve(v, id)
	var amb *projections.AmbiguousError
	switch {
	case errors.Is(err, projections.ErrNotFound):
		return nil, &commands.NotFoundError{Kind: "deployment", ID: id}
	case errors.As(err, &amb):
		return nil, commands.Invalid("id", "%v", amb)
	case err != nil:
		return nil, err
	}
	return d, s.authorizeNamespace(r, d.Namespace, policy.CapReadJob)
}
