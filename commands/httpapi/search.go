package httpapi

import (
	"cmp"
	"errors"
	"net/http"
	"slices"
	"strings"

	"github.com/ordoplane/ordo/api"
	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/acl/policy"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/allocs"
	"github.com/ordoplane/ordo/projections/csi"
	"github.com/ordoplane/ordo/projections/deployments"
	"github.com/ordoplane/ordo/projections/evals"
	"github.com/ordoplane/ordo/projections/jobs"
	"github.com/ordoplane/ordo/projections/namespaces"
	"github.com/ordoplane/ordo/projections/nodepools"
	"github.com/ordoplane/ordo/projections/nodes"
	"github.com/ordoplane/ordo/projections/variables"
)

// Search limits, Nomad's defaults: a prefix search answers at most
// searchLimit ids per context, a fuzzy search fuzzyLimit matches, and a
// fuzzy text must be at least fuzzyMinTerm characters.
const (
	searchLimit  = 20
	fuzzyLimit   = 100
	fuzzyMinTerm = 2
)

var searchTables = []string{jobs.Table, allocs.Table, evals.Table, deployments.Table, nodes.Table,
	namespaces.Table, nodepools.Table, csi.PluginsTable, csi.VolumesTable, variables.Table}

// errSearchFull stops a walk once a context has more than its limit.
var errSearchFull = errors.New("search: context full")

func (s *Server) searchRoutes() {
	s.handle("PUT /v1/search", s.leader(endpoint(s.prefixSearch)))
	s.handle("POST /v1/search", s.leader(endpoint(s.prefixSearch)))
	s.handle("PUT /v1/search/fuzzy", s.leader(endpoint(s.fuzzySearch)))
	s.handle("POST /v1/search/fuzzy", s.leader(endpoint(s.fuzzySearch)))
}

// searchItem is one object a search walks: ID is what a prefix search
// matches and answers, Name what a fuzzy search matches and answers, with
// Scope naming the objects that hold it.
type searchItem struct {
	ID, Name string
	Scope    []string
}

// searchScope is who searches where: ns is the request's namespace ("*"
// for every one), acl the caller's (nil when ACLs are disabled).
type searchScope struct {
	ns  string
	acl *policy.ACL
}

func (sc *searchScope) namespace(ns, c string) bool {
	return sc.acl == nil || sc.acl.AllowNamespace(ns, c)
}
func (sc *searchScope) node() bool { return sc.acl == nil || sc.acl.AllowNode(false) }

// searchSource walks the objects of one context whose id starts with
// prefix that the caller may see.
type searchSource struct {
	context string
	walk    func(v projections.View, sc *searchScope, prefix string, fn func(searchItem) error) error
}

// searchSources are the contexts of "all", in Nomad's names.
var searchSources = []searchSource{
	{"jobs", func(v projections.View, sc *searchScope, prefix string, fn func(searchItem) error) error {
		return jobs.Scan(v, jobs.Query{Namespace: sc.ns, Prefix: prefix}, func(j *jobs.Stub) error {
			if !sc.namespace(j.Namespace, policy.CapListJobs) {
				return nil
			}
			return fn(searchItem{ID: j.ID, Name: j.ID, Scope: []string{j.Namespace}})
		})
	}},
	{"evals", func(v projections.View, sc *searchScope, prefix string, fn func(searchItem) error) error {
		return evals.Scan(v, evals.Query{Namespace: sc.ns, Prefix: prefix}, func(e *evals.Eval) error {
			if !sc.namespace(e.Namespace, policy.CapReadJob) {
				return nil
			}
			return fn(searchItem{ID: e.ID, Name: e.ID, Scope: []string{e.Namespace}})
		})
	}},
	{"allocs", func(v projections.View, sc *searchScope, prefix string, fn func(searchItem) error) error {
		return allocs.Scan(v, allocs.Query{Namespace: sc.ns, Prefix: prefix}, func(a *allocs.Alloc) error {
			if !sc.namespace(a.Namespace, policy.CapReadJob) {
				return nil
			}
			return fn(searchItem{ID: a.ID, Name: a.Name, Scope: []string{a.Namespace, a.ID}})
		})
	}},
	{"nodes", func(v projections.View, sc *searchScope, prefix string, fn func(searchItem) error) error {
		if !sc.node() {
			return nil
		}
		return nodes.Scan(v, nodes.Query{Prefix: prefix}, func(n *nodes.Node) error {
			return fn(searchItem{ID: n.ID, Name: n.Name, Scope: []string{n.ID}})
		})
	}},
	{"deployment", func(v projections.View, sc *searchScope, prefix string, fn func(searchItem) error) error {
		return deployments.Scan(v, deployments.Query{Namespace: sc.ns, Prefix: prefix}, func(d *deployments.Deployment) error {
			if !sc.namespace(d.Namespace, policy.CapReadJob) {
				return nil
			}
			return fn(searchItem{ID: d.ID, Name: d.ID, Scope: []string{d.Namespace}})
		})
	}},
	{"plugins", func(v projections.View, sc *searchScope, prefix string, fn func(searchItem) error) error {
		if !sc.node() {
			return nil
		}
		return csi.ScanPlugins(v, prefix, func(p *csi.Plugin) error { return fn(searchItem{ID: p.ID, Name: p.ID}) })
	}},
	{"volumes", func(v projections.View, sc *searchScope, prefix string, fn func(searchItem) error) error {
		return csi.ScanVolumes(v, csi.VolumeQuery{Namespace: sc.ns, Prefix: prefix}, func(vol *csi.Volume) error {
			if !sc.namespace(vol.Namespace, policy.CapCSIListVolume) {
				return nil
			}
			return fn(searchItem{ID: vol.ID, Name: vol.ID, Scope: []string{vol.Namespace}})
		})
	}},
	{"namespaces", func(v projections.View, sc *searchScope, prefix string, fn func(searchItem) error) error {
		list, err := namespaces.List(v, prefix)
		for _, ns := range list {
			if sc.acl != nil && !sc.acl.AllowAnyNamespace(ns.Name) {
				continue
			}
			if err := fn(searchItem{ID: ns.Name, Name: ns.Name}); err != nil {
				return err
			}
		}
		return err
	}},
	{"node_pools", func(v projections.View, sc *searchScope, prefix string, fn func(searchItem) error) error {
		if !sc.node() {
			return nil
		}
		list, err := nodepools.List(v, prefix)
		for _, p := range list {
			if err := fn(searchItem{ID: p.Name, Name: p.Name}); err != nil {
				return err
			}
		}
		return err
	}},
	{"vars", func(v projections.View, sc *searchScope, prefix string, fn func(searchItem) error) error {
		return variables.Scan(v, variables.Query{Namespace: sc.ns, Prefix: prefix}, func(x *variables.Variable) error {
			if sc.acl != nil && !sc.acl.AllowVariable(x.Namespace, x.Path, policy.VarList) {
				return nil
			}
			return fn(searchItem{ID: x.Path, Name: x.Path, Scope: []string{x.Namespace}})
		})
	}},
}

// searchScopeOf returns the scope of r: ?namespace, else the body's,
// else "default".
func (s *Server) searchScopeOf(r *http.Request, bodyNS string) *searchScope {
	sc := &searchScope{ns: cmp.Or(r.URL.Query().Get("namespace"), bodyNS, "default")}
	if s.cfg.ACL != nil {
		if id := identityOf(r); id != nil {
			sc.acl = id.ACL
		} else {
			sc.acl = policy.Compile(nil)
		}
	}
	return sc
}

// sourcesFor returns the sources context names: every one for "all".
func sourcesFor(context string, extra ...string) ([]searchSource, error) {
	if context == "all" || context == "" {
		return searchSources, nil
	}
	for _, src := range searchSources {
		if src.context == context {
			return []searchSource{src}, nil
		}
	}
	if slices.Contains(extra, context) {
		return nil, nil
	}
	return nil, commands.Invalid("Context", "%q is not a search context (all, jobs, evals, allocs, nodes, deployment, "+
		"plugins, volumes, namespaces, node_pools, vars)", context)
}

// prefixSearch serves PUT /v1/search: Nomad's prefix search, the ids
// starting with Prefix in each context, at most 20 each (Truncations
// says which have more), those the caller may see.
func (s *Server) prefixSearch(w http.ResponseWriter, r *http.Request) error {
	var body api.SearchRequest
	if err := commands.DecodeJSON(r.Body, s.cfg.BodyLimit, &body); err != nil {
		return err
	}
	srcs, err := sourcesFor(body.Context)
	if err != nil {
		return err
	}
	sc := s.searchScopeOf(r, body.Namespace)
	s.query(w, r, searchTables, func(v projections.View) (any, error) {
		out := api.SearchResponse{Matches: map[string][]string{}, Truncations: map[string]bool{}, KnownLeader: true}
		out.Index, _ = v.AppliedIndex()
		for _, src := range srcs {
			ids := []string{}
			err := src.walk(v, sc, body.Prefix, func(it searchItem) error {
				if len(ids) == searchLimit {
					return errSearchFull
				}
				ids = append(ids, it.ID)
				return nil
			})
			if err != nil && !errors.Is(err, errSearchFull) {
				return nil, err
			}
			out.Matches[src.context], out.Truncations[src.context] = ids, err != nil
		}
		return out, nil
	})
	return nil
}

// fuzzySearch serves PUT /v1/search/fuzzy: Nomad's fuzzy search, the
// names containing Text (case-insensitive) in each context, prefix
// matches first; jobs also yield their groups ("groups", scoped by
// namespace and job) and tasks ("tasks", scoped by namespace, job and
// group).
func (s *Server) fuzzySearch(w http.ResponseWriter, r *http.Request) error {
	var body api.FuzzySearchRequest
	if err := commands.DecodeJSON(r.Body, s.cfg.BodyLimit, &body); err != nil {
		return err
	}
	if len(body.Text) < fuzzyMinTerm {
		return commands.Invalid("Text", "fuzzy search query must be at least %d characters", fuzzyMinTerm)
	}
	srcs, err := sourcesFor(body.Context, "groups", "tasks")
	if err != nil {
		return err
	}
	wantJobs := body.Context == "" || body.Context == "all" || body.Context == "jobs" ||
		body.Context == "groups" || body.Context == "tasks"
	text := strings.ToLower(body.Text)
	sc := s.searchScopeOf(r, body.Namespace)
	s.query(w, r, searchTables, func(v projections.View) (any, error) {
		out := api.FuzzySearchResponse{Matches: map[string][]api.FuzzyMatch{}, Truncations: map[string]bool{}, KnownLeader: true}
		out.Index, _ = v.AppliedIndex()
		add := func(context, name string, scope []string) {
			if !strings.Contains(strings.ToLower(name), text) {
				return
			}
			if len(out.Matches[context]) == fuzzyLimit {
				out.Truncations[context] = true
				return
			}
			out.Matches[context] = append(out.Matches[context], api.FuzzyMatch{ID: name, Scope: scope})
		}
		for _, src := range srcs {
			err := src.walk(v, sc, "", func(it searchItem) error {
				add(src.context, it.Name, it.Scope)
				return nil
			})
			if err != nil {
				return nil, err
			}
		}
		if wantJobs {
			if err := fuzzyGroupsAndTasks(v, sc, add); err != nil {
				return nil, err
			}
		}
		for context, ms := range out.Matches {
			if body.Context != "" && body.Context != "all" && context != body.Context {
				delete(out.Matches, context)
				continue
			}
			slices.SortStableFunc(ms, func(a, b api.FuzzyMatch) int {
				pa, pb := strings.HasPrefix(strings.ToLower(a.ID), text), strings.HasPrefix(strings.ToLower(b.ID), text)
				if pa != pb {
					if pa {
						return -1
					}
					return 1
				}
				return cmp.Compare(a.ID, b.ID)
			})
		}
		return out, nil
	})
	return nil
}

// fuzzyGroupsAndTasks offers the groups and tasks of every job the
// caller may read to add.
func fuzzyGroupsAndTasks(v projections.View, sc *searchScope, add func(context, name string, scope []string)) error {
	return jobs.Scan(v, jobs.Query{Namespace: sc.ns}, func(st *jobs.Stub) error {
		if !sc.namespace(st.Namespace, policy.CapReadJob) {
			return nil
		}
		j, err := jobs.Get(v, st.Namespace, st.ID)
		if err != nil {
			return err
		}
		for _, tg := range j.TaskGroups {
			add("groups", tg.Name, []string{j.Namespace, j.ID})
			for _, t := range tg.Tasks {
				add("tasks", t.Name, []string{j.Namespace, j.ID, tg.Name})
			}
		}
		return nil
	})
}
