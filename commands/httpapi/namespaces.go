package httpapi

import (
	"errors"
	"net/http"
	"slices"

	"github.com/ordoplane/ordo/api"
	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/namespace"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/namespaces"
)

var namespaceTables = []string{namespaces.Table}

// listNamespaces lists namespaces by name, paged like the other lists:
// prefix, filter, per_page, reverse, and the next namespace's name as
// next_token.
func (s *Server) listNamespaces(w http.ResponseWriter, r *http.Request) error {
	pq, err := parsePage(r, func(token string) (string, bool) {
		return token, namespace.ValidName("next_token", token) == nil
	})
	if err != nil {
		return err
	}
	s.queryPage(w, r, namespaceTables, func(v projections.View) (any, error) {
		list, err := namespaces.List(v, pq.prefix) // by name; namespaces are few
		if err != nil {
			return nil, err
		}
		if pq.reverse {
			slices.Reverse(list)
		}
		p := newPager(pq)
		for _, ns := range list {
			if pq.from != "" && (!pq.reverse && ns.Name < pq.from || pq.reverse && ns.Name > pq.from) {
				continue
			}
			if err = p.addToken(ns.Name, ns); err != nil {
				break
			}
		}
		return p.result(err)
	})
	return nil
}

func (s *Server) getNamespace(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("name")
	if err := namespace.ValidName("name", name); err != nil {
		return err
	}
	s.query(w, r, namespaceTables, func(v projections.View) (any, error) {
		ns, err := namespaces.Get(v, name)
		if errors.Is(err, projections.ErrNotFound) {
			return nil, &commands.NotFoundError{Kind: "namespace", ID: name}
		}
		return ns, err
	})
	return nil
}

// decodeNamespaceRequest reads a namespace apply body; the name in the path
// wins when the body has none and must agree when it has one. The nomad/api
// client puts to /v1/namespace with the name in the body only.
func decodeNamespaceRequest(r *http.Request, pathName string, limit int64) (namespace.Apply, error) {
	var body api.NamespaceRequest
	if err := commands.DecodeJSON(r.Body, limit, &body); err != nil {
		return namespace.Apply{}, err
	}
	if body.Name == "" {
		body.Name = pathName
	}
	if pathName != "" && body.Name != pathName {
		return namespace.Apply{}, commands.Invalid("Name", "%q does not match the name in the path, %q", body.Name, pathName)
	}
	return namespace.Apply{Name: body.Name, Description: body.Description, Meta: body.Meta, VariablesQuota: body.VariablesQuota}, nil
}

func (s *Server) applyNamespace(w http.ResponseWriter, r *http.Request) error {
	cmd, err := decodeNamespaceRequest(r, r.PathValue("name"), s.cfg.BodyLimit)
	if err != nil {
		return err
	}
	out, err := s.cfg.Pipeline.Run(r.Context(), "namespace.apply", request(r), cmd)
	if err != nil {
		return err
	}
	writeResult(w, out)
	return nil
}

func (s *Server) deleteNamespace(w http.ResponseWriter, r *http.Request) error {
	out, err := s.cfg.Pipeline.Run(r.Context(), "namespace.delete", request(r), namespace.Delete{Name: r.PathValue("name")})
	if err != nil {
		return err
	}
	writeResult(w, out)
	return nil
}
