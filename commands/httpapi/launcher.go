package httpapi

import (
	"errors"
	"net/http"
	"time"

	"github.com/ordoplane/ordo/commands"
	lcmd "github.com/ordoplane/ordo/commands/launcher"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/launcher"
)

// The launcher's API (docs/launcher.md): providers, tenants, node
// requests and instances. Reads block on their tables like every list.
var (
	providerTables  = []string{launcher.ProvidersTable, launcher.InstancesTable}
	tenantTables    = []string{launcher.TenantsTable}
	requestTables   = []string{launcher.RequestsTable}
	instanceTables  = []string{launcher.InstancesTable}
	componentTables = []string{launcher.ComponentsTable}
)

func (s *Server) launcherRoutes() {
	s.handle("GET /v1/providers", s.leader(endpoint(s.listProviders)))
	s.handle("POST /v1/providers", s.leader(endpoint(s.applyProvider)))
	s.handle("PUT /v1/providers", s.leader(endpoint(s.applyProvider)))
	s.handle("GET /v1/provider/{name}", s.leader(endpoint(s.getProvider)))
	s.handle("DELETE /v1/provider/{name}", s.leader(endpoint(s.deleteProvider)))
	s.handle("GET /v1/tenants", s.leader(endpoint(s.listTenants)))
	s.handle("POST /v1/tenant/{name}", s.leader(endpoint(s.applyTenant)))
	s.handle("PUT /v1/tenant/{name}", s.leader(endpoint(s.applyTenant)))
	s.handle("DELETE /v1/tenant/{name}", s.leader(endpoint(s.deleteTenant)))
	s.handle("GET /v1/node-requests", s.leader(endpoint(s.listNodeRequests)))
	s.handle("POST /v1/node-requests", s.leader(endpoint(s.createNodeRequest)))
	s.handle("PUT /v1/node-requests", s.leader(endpoint(s.createNodeRequest)))
	s.handle("GET /v1/node-request/{id}", s.leader(endpoint(s.getNodeRequest)))
	s.handle("DELETE /v1/node-request/{id}", s.leader(endpoint(s.deleteNodeRequest)))
	s.handle("GET /v1/instances", s.leader(endpoint(s.listInstances)))
	s.handle("GET /v1/instance/{id}", s.leader(endpoint(s.getInstance)))
	s.handle("POST /v1/instance/{id}/hold", s.leader(endpoint(s.holdInstance)))
	s.handle("PUT /v1/instance/{id}/hold", s.leader(endpoint(s.holdInstance)))
	s.handle("DELETE /v1/instance/{id}", s.leader(endpoint(s.deleteInstance)))
	s.handle("GET /v1/components", s.leaderOnly(endpoint(s.listComponents)))
	s.handle("PUT /v1/component/{kind}/{server}/heartbeat", s.leader(endpoint(s.heartbeatComponent)))
}

// Components is the leader's component liveness tracker
// (processors/launcher.Liveness) as the API sees it.
type Components interface {
	// Heartbeat records component kind/server alive and returns the TTL
	// within which it must heartbeat again; a *commands.NotFoundError
	// when it is not registered.
	Heartbeat(kind, server string) (time.Duration, error)
	// Liveness returns what the leader knows of component id's liveness;
	// ok is false when it tracks none.
	Liveness(id string) (last, deadline time.Time, alive, ok bool)
}

// ComponentStatus is a component as GET /v1/components shows it: what it
// registered, and its liveness as the leader holds it in memory (no log
// entry records a heartbeat).
type ComponentStatus struct {
	*launcher.Component
	// Status is "alive", "stale" (past its TTL, being deregistered) or
	// "unknown" (a ?stale read on a follower, or no tracker).
	Status string
	// LastHeartbeat is its last heartbeat since this leader took over,
	// absent when none yet; HeartbeatDeadline is when it goes stale.
	LastHeartbeat     *time.Time `json:",omitempty"`
	HeartbeatDeadline *time.Time `json:",omitempty"`
}

// ComponentHeartbeatResponse answers a component heartbeat.
type ComponentHeartbeatResponse struct {
	// HeartbeatTTL is how long the leader waits for the next heartbeat.
	HeartbeatTTL time.Duration
}

// listComponents lists the registered components (P10): the pools each
// server's launcher runs and its liveness; ?kind= narrows to one kind. A
// follower forwards it: liveness lives in the leader's memory.
func (s *Server) listComponents(w http.ResponseWriter, r *http.Request) error {
	kind := r.URL.Query().Get("kind")
	if kind != "" && kind != events.ComponentLauncher {
		return commands.Invalid("kind", "%q is not a component kind (%s)", kind, events.ComponentLauncher)
	}
	s.query(w, r, componentTables, func(v projections.View) (any, error) {
		cs, err := launcher.Components(v, kind)
		out := make([]ComponentStatus, 0, len(cs))
		for _, c := range cs {
			st := ComponentStatus{Component: c, Status: "unknown"}
			if s.cfg.Components != nil {
				if last, deadline, alive, ok := s.cfg.Components.Liveness(c.ComponentID()); ok {
					st.Status, st.HeartbeatDeadline = "stale", &deadline
					if alive {
						st.Status = "alive"
					}
					if !last.IsZero() {
						st.LastHeartbeat = &last
					}
				}
			}
			out = append(out, st)
		}
		return out, err
	})
	return nil
}

// heartbeatComponent reports a component alive to the leader's tracker:
// no log entry; 404 when the component is not registered (it registers
// again). A follower forwards it.
func (s *Server) heartbeatComponent(w http.ResponseWriter, r *http.Request) error {
	kind, server := r.PathValue("kind"), r.PathValue("server")
	if kind != events.ComponentLauncher {
		return commands.Invalid("kind", "%q is not a component kind (%s)", kind, events.ComponentLauncher)
	}
	if s.cfg.Components == nil {
		return &commands.NotFoundError{Kind: "component", ID: kind + "/" + server}
	}
	ttl, err := s.cfg.Components.Heartbeat(kind, server)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, ComponentHeartbeatResponse{HeartbeatTTL: ttl})
	return nil
}

// ProviderStatus is a provider as GET /v1/provider/{name} shows it: its
// configuration and generation, pause state, errored labels, what its
// live instances hold (building ones included, P19) and how many are in
// each state.
type ProviderStatus struct {
	Name          string
	Config        events.ProviderConfig
	ConfigIndex   uint64
	Paused        bool
	PausedRequest string
	PauseReason   string
	ErroredLabels map[string]string
	Used          launcher.Usage
	// Quota is the sim driver's configured quota (0 is unlimited); Free
	// is Quota minus Used where Quota is set.
	Quota       *events.SimQuota
	Free        *launcher.Usage
	States      map[string]int
	CreateIndex uint64
	ModifyIndex uint64
}

func providerStatus(v projections.View, p *launcher.Provider) (*ProviderStatus, error) {
	insts, err := launcher.ProviderInstances(v, p.Config.Name)
	if err != nil {
		return nil, err
	}
	st := &ProviderStatus{Name: p.Config.Name, Config: p.Config, ConfigIndex: p.ConfigIndex, Paused: p.Paused,
		PausedRequest: p.PausedRequest, PauseReason: p.PauseReason, ErroredLabels: p.ErroredLabels,
		Used: launcher.UsageOf(insts), States: map[string]int{}, CreateIndex: p.CreateIndex, ModifyIndex: p.ModifyIndex}
	for _, in := range insts {
		st.States[in.State]++
	}
	if sim := p.Config.Sim; sim != nil {
		q := sim.Quota
		st.Quota = &q
		free := launcher.Usage{Servers: q.Instances - st.Used.Servers, Cores: q.Cores - st.Used.Cores, RAMMB: q.RAMMB - st.Used.RAMMB}
		st.Free = &free
	}
	return st, nil
}

func (s *Server) listProviders(w http.ResponseWriter, r *http.Request) error {
	s.query(w, r, providerTables, func(v projections.View) (any, error) {
		ps, err := launcher.Providers(v)
		if err != nil {
			return nil, err
		}
		out := []*ProviderStatus{}
		for _, p := range ps {
			st, err := providerStatus(v, p)
			if err != nil {
				return nil, err
			}
			out = append(out, st)
		}
		return out, nil
	})
	return nil
}

func (s *Server) getProvider(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("name")
	if err := lcmd.ValidName("name", name); err != nil {
		return err
	}
	s.query(w, r, providerTables, func(v projections.View) (any, error) {
		p, err := launcher.GetProvider(v, name)
		if errors.Is(err, projections.ErrNotFound) {
			return nil, &commands.NotFoundError{Kind: "provider", ID: name}
		} else if err != nil {
			return nil, err
		}
		return providerStatus(v, p)
	})
	return nil
}

// providerRequest is the body of a provider apply: the provider file's
// HCL text (Filename only names it in errors), or a configuration in JSON.
type providerRequest struct {
	HCL      string
	Filename string
	Provider *events.ProviderConfig
}

func (s *Server) applyProvider(w http.ResponseWriter, r *http.Request) error {
	var body providerRequest
	if err := commands.DecodeJSON(r.Body, s.cfg.BodyLimit, &body); err != nil {
		return err
	}
	var cfg events.ProviderConfig
	switch {
	case body.HCL != "" && body.Provider != nil:
		return commands.Invalid("HCL", "give HCL or Provider, not both")
	case body.HCL != "":
		name := body.Filename
		if name == "" {
			name = "provider.hcl"
		}
		c, err := lcmd.ParseProvider([]byte(body.HCL), name)
		if err != nil {
			return err
		}
		cfg = c
	case body.Provider != nil:
		cfg = *body.Provider
	default:
		return commands.Invalid("HCL", "a provider file (HCL) or Provider is required")
	}
	return s.run(w, r, "provider.apply", lcmd.ApplyProvider{Config: cfg})
}

// run runs c and writes its outcome; its error is the handler's.
func (s *Server) run(w http.ResponseWriter, r *http.Request, name string, c commands.Command) error {
	out, err := s.cfg.Pipeline.Run(r.Context(), name, request(r), c)
	if err != nil {
		return err
	}
	writeResult(w, out)
	return nil
}

func (s *Server) deleteProvider(w http.ResponseWriter, r *http.Request) error {
	return s.run(w, r, "provider.delete", lcmd.DeleteProvider{Name: r.PathValue("name")})
}

func (s *Server) listTenants(w http.ResponseWriter, r *http.Request) error {
	s.query(w, r, tenantTables, func(v projections.View) (any, error) {
		ts, err := launcher.Tenants(v)
		if ts == nil {
			ts = []*launcher.Tenant{}
		}
		return ts, err
	})
	return nil
}

func (s *Server) applyTenant(w http.ResponseWriter, r *http.Request) error {
	var t events.Tenant
	if err := commands.DecodeJSON(r.Body, s.cfg.BodyLimit, &t); err != nil {
		return err
	}
	if err := pathValue(r, "name", "Name", &t.Name); err != nil {
		return err
	}
	return s.run(w, r, "tenant.apply", lcmd.ApplyTenant{Tenant: t})
}

func (s *Server) deleteTenant(w http.ResponseWriter, r *http.Request) error {
	return s.run(w, r, "tenant.delete", lcmd.DeleteTenant{Name: r.PathValue("name")})
}

// nodeRequestBody is the body of a node request create.
type nodeRequestBody struct {
	Labels           []string
	Requestor        string
	Tenant           string
	RelativePriority int
}

func (s *Server) createNodeRequest(w http.ResponseWriter, r *http.Request) error {
	var body nodeRequestBody
	if err := commands.DecodeJSON(r.Body, s.cfg.BodyLimit, &body); err != nil {
		return err
	}
	if body.Requestor == "" {
		body.Requestor = actorOf(r)
	}
	cmd := &lcmd.CreateRequest{Labels: body.Labels, Requestor: body.Requestor, Tenant: body.Tenant, RelativePriority: body.RelativePriority}
	out, err := s.cfg.Pipeline.Run(r.Context(), "node-request.create", request(r), cmd)
	if err != nil {
		return err
	}
	setIndex(w, out.Index)
	writeJSON(w, http.StatusOK, map[string]any{"ID": cmd.ID(), "Index": out.Index, "Duplicate": out.Duplicate})
	return nil
}

func (s *Server) listNodeRequests(w http.ResponseWriter, r *http.Request) error {
	q, err := parsePage(r, func(token string) (string, bool) { return token, true })
	if err != nil {
		return err
	}
	s.queryPage(w, r, requestTables, func(v projections.View) (any, error) {
		pg := newPager(q)
		return pg.result(launcher.ScanRequests(v, q.prefix, q.from, func(req *launcher.Request) error {
			return pg.addToken(req.ID, req)
		}))
	})
	return nil
}

func (s *Server) getNodeRequest(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	s.query(w, r, requestTables, func(v projections.View) (any, error) {
		req, err := launcher.ResolveRequest(v, id)
		if errors.Is(err, projections.ErrNotFound) {
			return nil, &commands.NotFoundError{Kind: "node request", ID: id}
		}
		return req, err
	})
	return nil
}

func (s *Server) deleteNodeRequest(w http.ResponseWriter, r *http.Request) error {
	return s.run(w, r, "node-request.delete", lcmd.DeleteRequest{ID: r.PathValue("id")})
}

func (s *Server) listInstances(w http.ResponseWriter, r *http.Request) error {
	q, err := parsePage(r, func(token string) (string, bool) { return token, true })
	if err != nil {
		return err
	}
	provider, state := r.URL.Query().Get("provider"), r.URL.Query().Get("state")
	s.queryPage(w, r, instanceTables, func(v projections.View) (any, error) {
		pg := newPager(q)
		return pg.result(launcher.ScanInstances(v, q.prefix, q.from, func(in *launcher.Instance) error {
			if (provider != "" && in.Provider != provider) || (state != "" && in.State != state) {
				return nil
			}
			return pg.addToken(in.ID, in)
		}))
	})
	return nil
}

func (s *Server) getInstance(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	s.query(w, r, instanceTables, func(v projections.View) (any, error) {
		in, err := launcher.ResolveInstance(v, id)
		if errors.Is(err, projections.ErrNotFound) {
			return nil, &commands.NotFoundError{Kind: "instance", ID: id}
		}
		return in, err
	})
	return nil
}

func (s *Server) holdInstance(w http.ResponseWriter, r *http.Request) error {
	return s.run(w, r, "instance.hold", lcmd.HoldInstance{ID: r.PathValue("id"), Reason: "held by " + actorOf(r)})
}

func (s *Server) deleteInstance(w http.ResponseWriter, r *http.Request) error {
	return s.run(w, r, "instance.delete", lcmd.DeleteInstance{ID: r.PathValue("id")})
}
