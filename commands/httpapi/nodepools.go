package httpapi

import (
	"errors"
	"net/http"

	"github.com/ordoplane/ordo/api"
	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/nodepool"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/jobs"
	"github.com/ordoplane/ordo/projections/nodepools"
	"github.com/ordoplane/ordo/projections/nodes"
)

var nodePoolTables = []string{nodepools.Table}

// nodePoolRoutes are Nomad's node pool routes. GET /v1/node/pool/:name
// shares its shape with GET /v1/node/:id/allocations, so it is routed as
// /v1/node/{kind}/{name} and answers only kind "pool".
func (s *Server) nodePoolRoutes() {
	s.handle("GET /v1/node/pools", s.leader(endpoint(s.listNodePools)))
	s.handle("PUT /v1/node/pools", s.leader(endpoint(s.applyNodePool)))
	s.handle("POST /v1/node/pools", s.leader(endpoint(s.applyNodePool)))
	s.handle("GET /v1/node/{kind}/{name}", s.leader(endpoint(s.getNodePool)))
	s.handle("DELETE /v1/node/pool/{name}", s.leader(endpoint(s.deleteNodePool)))
	s.handle("GET /v1/node/pool/{name}/nodes", s.leader(endpoint(s.nodePoolNodes)))
	s.handle("GET /v1/node/pool/{name}/jobs", s.leader(endpoint(s.nodePoolJobs)))
}

func poolShape(p *nodepools.NodePool) api.NodePool {
	return api.NodePool{Name: p.Name, Description: p.Description, Meta: p.Meta, CreateIndex: p.CreateIndex, ModifyIndex: p.ModifyIndex}
}

// listNodePools lists the pools by name, the built-in ones included;
// prefix and filter select.
func (s *Server) listNodePools(w http.ResponseWriter, r *http.Request) error {
	return queryList(s, w, r, nodePoolTables, listShapes(r, nodepools.List, poolShape))
}

// pathPool returns the pool name in the path, validated.
func pathPool(r *http.Request) (string, error) {
	name := r.PathValue("name")
	if name == nodepools.All || name == nodepools.Default {
		return name, nil
	}
	return name, nodepool.ValidName("name", name)
}

// poolExists returns a 404 error when pool name does not exist in v.
func poolExists(v projections.View, name string) error {
	_, err := nodepools.Get(v, name)
	if errors.Is(err, projections.ErrNotFound) {
		return &commands.NotFoundError{Kind: "node pool", ID: name}
	}
	return err
}

func (s *Server) getNodePool(w http.ResponseWriter, r *http.Request) error {
	if r.PathValue("kind") != "pool" {
		return &notFoundPath{r.Method + " " + r.URL.Path}
	}
	name, err := pathPool(r)
	if err != nil {
		return err
	}
	s.query(w, r, nodePoolTables, func(v projections.View) (any, error) {
		if err := poolExists(v, name); err != nil {
			return nil, err
		}
		p, err := nodepools.Get(v, name)
		if err != nil {
			return nil, err
		}
		return poolShape(p), nil
	})
	return nil
}

// applyNodePool serves PUT /v1/node/pools: the body is a NodePool.
func (s *Server) applyNodePool(w http.ResponseWriter, r *http.Request) error {
	var body api.NodePool
	if err := commands.DecodeJSON(r.Body, s.cfg.BodyLimit, &body); err != nil {
		return err
	}
	out, err := s.cfg.Pipeline.Run(r.Context(), "nodepool.apply", request(r),
		nodepool.Apply{Name: body.Name, Description: body.Description, Meta: body.Meta})
	if err != nil {
		return err
	}
	writeResult(w, out)
	return nil
}

func (s *Server) deleteNodePool(w http.ResponseWriter, r *http.Request) error {
	out, err := s.cfg.Pipeline.Run(r.Context(), "nodepool.delete", request(r), nodepool.Delete{Name: r.PathValue("name")})
	if err != nil {
		return err
	}
	writeResult(w, out)
	return nil
}

// nodePoolNodes lists the nodes in a pool (every node for "all") as
// Nomad's NodeListStubs.
func (s *Server) nodePoolNodes(w http.ResponseWriter, r *http.Request) error {
	name, err := pathPool(r)
	if err != nil {
		return err
	}
	return queryList(s, w, r, append([]string{nodepools.Table}, nodeTables...), func(v projections.View) ([]*nodes.Stub, error) {
		if err := poolExists(v, name); err != nil {
			return nil, err
		}
		list, err := nodepools.Nodes(v, name)
		out := make([]*nodes.Stub, 0, len(list))
		for _, n := range list {
			out = append(out, n.Stub())
		}
		return out, err
	})
}

// nodePoolJobs lists the jobs of ?namespace ("*" for every one) that run
// in a pool, as Nomad's JobListStubs.
func (s *Server) nodePoolJobs(w http.ResponseWriter, r *http.Request) error {
	name, err := pathPool(r)
	if err != nil {
		return err
	}
	ns, err := jobNamespace(r)
	if err != nil {
		return err
	}
	return queryList(s, w, r, append([]string{nodepools.Table}, jobTables...), func(v projections.View) ([]*jobs.Stub, error) {
		if err := poolExists(v, name); err != nil {
			return nil, err
		}
		list, err := nodepools.Jobs(v, ns, name)
		out := make([]*jobs.Stub, 0, len(list))
		for _, j := range list {
			sum, err := jobs.GetSummary(v, j.Namespace, j.ID)
			if err != nil && !errors.Is(err, projections.ErrNotFound) {
				return nil, err
			}
			out = append(out, j.Stub(sum))
		}
		return out, err
	})
}
