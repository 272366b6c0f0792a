package httpapi

import (
	"hash/fnv"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/acl/policy"
	"github.com/ordoplane/ordo/commands/namespace"
	"github.com/ordoplane/ordo/commands/services"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	ps "github.com/ordoplane/ordo/projections/services"
)

var serviceTables = []string{ps.Table}

// serviceRoutes serves Nomad-native service discovery: Nomad's service
// API, and the client's registration API (ordo's own, beside its other
// client calls).
func (s *Server) serviceRoutes() {
	s.handle("GET /v1/services", s.leader(endpoint(s.listServices)))
	s.handle("GET /v1/service/{name}", s.leader(endpoint(s.getService)))
	s.handle("DELETE /v1/service/{name}/{id}", s.leader(endpoint(s.deleteService)))
	for _, m := range []string{"POST", "PUT"} {
		s.handle(m+" /v1/client/{id}/services", s.leader(endpoint(s.registerServices)))
		s.handle(m+" /v1/client/{id}/services/deregister", s.leader(endpoint(s.deregisterServices)))
	}
}

// serviceNamespace returns ?namespace ("default" when absent); "*" only
// when all is set.
func serviceNamespace(r *http.Request, all bool) (string, error) {
	ns := queryNamespace(r)
	if ns == ps.AllNamespaces {
		if all {
			return ns, nil
		}
		return "", commands.Invalid("namespace", "a service is read in one namespace, not %q", ns)
	}
	return ns, namespace.ValidName("namespace", ns)
}

// ServiceListStub is one service of a namespace in GET /v1/services, as
// Nomad's api.ServiceRegistrationStub: its name and the union of its
// instances' tags.
type ServiceListStub struct {
	ServiceName string
	Tags        []string
}

// ServiceList is one namespace's services in GET /v1/services, as
// Nomad's api.ServiceRegistrationListStub.
type ServiceList struct {
	Namespace string
	Services  []*ServiceListStub
}

// listServices answers the services of ?namespace (every namespace the
// caller may read with "*"), grouped by namespace, each with the union
// of its instances' tags, as Nomad's GET /v1/services.
func (s *Server) listServices(w http.ResponseWriter, r *http.Request) error {
	ns, err := serviceNamespace(r, true)
	if err != nil {
		return err
	}
	// One namespace needs read-job there; "*" lists those the caller may
	// read, item by item below, as Nomad's.
	if ns != ps.AllNamespaces {
		if err := s.authorizeNamespace(r, ns, policy.CapReadJob); err != nil {
			return err
		}
	}
	return queryList(s, w, r, serviceTables, func(v projections.View) ([]*ServiceList, error) {
		out := []*ServiceList{}
		var cur *ServiceList
		var stub *ServiceListStub
		err := ps.Scan(v, ns, func(reg *events.ServiceRegistration) error {
			if s.authorizeNamespace(r, reg.Namespace, policy.CapReadJob) != nil {
				return nil
			}
			if cur == nil || cur.Namespace != reg.Namespace {
				cur = &ServiceList{Namespace: reg.Namespace, Services: []*ServiceListStub{}}
				out = append(out, cur)
				stub = nil
			}
			if stub == nil || stub.ServiceName != reg.ServiceName {
				stub = &ServiceListStub{ServiceName: reg.ServiceName, Tags: []string{}}
				cur.Services = append(cur.Services, stub)
			}
			for _, t := range reg.Tags {
				if !slices.Contains(stub.Tags, t) {
					stub.Tags = append(stub.Tags, t)
				}
			}
			return nil
		})
		for _, l := range out {
			for _, st := range l.Services {
				sort.Strings(st.Tags)
			}
		}
		return out, err
	})
}

// getService answers the instances of one service, as Nomad's GET
// /v1/service/:name: filtered by ?filter, then, with ?choose=N|key, the N
// instances rendezvous hashing on key picks. A blocking query waits on
// this service's changes only.
func (s *Server) getService(w http.ResponseWriter, r *http.Request) error {
	ns, err := serviceNamespace(r, false)
	if err != nil {
		return err
	}
	name := r.PathValue("name")
	if err := services.ValidName("name", name); err != nil {
		return err
	}
	f, err := listFilter(r)
	if err != nil {
		return err
	}
	n, key, err := parseChoose(r.URL.Query().Get("choose"))
	if err != nil {
		return err
	}
	s.queryKey(w, r, ps.NameChangesTable, ps.NameKey(ns, name), func(v projections.View) (any, error) {
		list, err := ps.ByName(v, ns, name)
		if err != nil {
			return nil, err
		}
		list, err = filterList(f, list)
		if err != nil {
			return nil, err
		}
		if n > 0 {
			list = Choose(list, n, key)
		}
		return list, nil
	})
	return nil
}

// parseChoose reads ?choose=N|key; 0 when absent.
func parseChoose(v string) (int, string, error) {
	if v == "" {
		return 0, "", nil
	}
	ns, key, ok := strings.Cut(v, "|")
	n, err := strconv.Atoi(ns)
	if !ok || err != nil || n < 1 || key == "" {
		return 0, "", commands.Invalid("choose", "%q is not N|key with N a positive integer and a key", v)
	}
	return n, key, nil
}

// Choose returns the n instances of list that rendezvous (highest random
// weight) hashing on key ranks first: the same key picks the same
// instances while they exist, and an instance leaving or joining moves
// only the callers that picked it.
func Choose(list []*events.ServiceRegistration, n int, key string) []*events.ServiceRegistration {
	type scored struct {
		s     *events.ServiceRegistration
		score uint64
	}
	all := make([]scored, len(list))
	for i, s := range list {
		h := fnv.New64a()
		h.Write([]byte(key))
		h.Write([]byte{0})
		h.Write([]byte(s.ID))
		all[i] = scored{s, mix(h.Sum64())}
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].score != all[j].score {
			return all[i].score > all[j].score
		}
		return all[i].s.ID < all[j].s.ID
	})
	out := make([]*events.ServiceRegistration, 0, min(n, len(all)))
	for i := 0; i < n && i < len(all); i++ {
		out = append(out, all[i].s)
	}
	return out
}

// mix spreads an FNV hash's bits (a finalizer), so near keys weigh apart.
func mix(x uint64) uint64 {
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return x
}

// deleteService removes one instance, as Nomad's DELETE
// /v1/service/:name/:id.
func (s *Server) deleteService(w http.ResponseWriter, r *http.Request) error {
	ns, err := serviceNamespace(r, false)
	if err != nil {
		return err
	}
	out, err := s.cfg.Pipeline.Run(r.Context(), "service.delete", request(r),
		services.Delete{Namespace: ns, Name: r.PathValue("name"), ID: r.PathValue("id")})
	if err != nil {
		return err
	}
	writeResult(w, out)
	return nil
}

// registerServicesRequest is the body of PUT /v1/client/:id/services.
type registerServicesRequest struct {
	Services []events.ServiceRegistration
}

// registerServices is ordo's client API: a node registers or updates
// its allocations' service instances.
func (s *Server) registerServices(w http.ResponseWriter, r *http.Request) error {
	var body registerServicesRequest
	if err := commands.DecodeJSON(r.Body, s.cfg.BodyLimit, &body); err != nil {
		return err
	}
	id, err := pathNodeID(r, "")
	if err != nil {
		return err
	}
	out, err := s.cfg.Pipeline.Run(r.Context(), "service.register", request(r), services.Register{NodeID: id, Services: body.Services})
	if err != nil {
		return err
	}
	writeResult(w, out)
	return nil
}

// deregisterServicesRequest is the body of PUT
// /v1/client/:id/services/deregister.
type deregisterServicesRequest struct {
	IDs []string
}

// deregisterServices is ordo's client API: a node removes service
// instances of its allocations.
func (s *Server) deregisterServices(w http.ResponseWriter, r *http.Request) error {
	var body deregisterServicesRequest
	if err := commands.DecodeJSON(r.Body, s.cfg.BodyLimit, &body); err != nil {
		return err
	}
	id, err := pathNodeID(r, "")
	if err != nil {
		return err
	}
	out, err := s.cfg.Pipeline.Run(r.Context(), "service.deregister", request(r), services.Deregister{NodeID: id, IDs: body.IDs})
	if err != nil {
		return err
	}
	writeResult(w, out)
	return nil
}
