package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/pprof"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ordoplane/ordo/api"
	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/httpapi/ui"
	"github.com/ordoplane/ordo/commands/variables"
	"github.com/ordoplane/ordo/logtee"
	"github.com/ordoplane/ordo/projections/fsm"
	"github.com/ordoplane/ordo/storage/raftlog"
)

// Self describes the agent serving the API.
type Self struct {
	ID       string
	Name     string
	HTTPAddr string
	RaftAddr string
	Dev      bool
	Version  string
	// Config is the agent's effective configuration, shown by /v1/agent/self.
	Config any
	// Region and Datacenter are the agent's (cluster.go); default
	// "global" and "dc1".
	Region, Datacenter string
}

// JoinRequest is a server asking to join the cluster.
type JoinRequest struct {
	ID       string
	RaftAddr string
	HTTPAddr string
}

// JoinResponse lists the servers the answering agent knows.
type JoinResponse struct {
	Known  []JoinRequest
	Leader string
}

// Config configures a Server.
type Config struct {
	Node     *raftlog.Node
	FSM      *fsm.FSM
	Pipeline *commands.Pipeline
	Self     Self
	// Join handles a server's join request; required for clusters.
	Join func(ctx context.Context, req JoinRequest) (JoinResponse, error)
	// ClusterSecret is the secret servers present in ClusterSecretHeader
	// to join and that authorises membership changes (membership.go);
	// empty refuses them all.
	ClusterSecret string
	// Heartbeats is the heartbeat monitor that node registers and
	// heartbeats reset; nil answers DefaultHeartbeatTTL and tracks nothing.
	Heartbeats Heartbeats
	// Components is the leader's component liveness tracker (launcher.go);
	// nil shows every component's status as unknown and answers a
	// component heartbeat 404.
	Components Components
	// Gatherer serves /v1/metrics; Registerer receives the API's own metrics.
	Gatherer   prometheus.Gatherer
	Registerer prometheus.Registerer
	Logger     *slog.Logger
	// BodyLimit bounds request bodies in bytes; default commands.DefaultBodyLimit.
	BodyLimit int64
	// DefaultWait and MaxWait bound blocking queries; default 5m and 10m.
	DefaultWait, MaxWait time.Duration
	// StreamHeartbeat is how often an idle event stream sends {}; default 10s.
	StreamHeartbeat time.Duration
	// Limits are the bounds the agent's http.Server enforces
	// (httplimit.NewServer); the server extends them for blocking queries,
	// streams and uploads (deadlines.go). Zero fields take their defaults.
	Limits HTTPLimits
	// EnableDebug serves Go's profiler under /debug/pprof/.
	EnableDebug bool
	// JobPlanner answers /v1/job/:id/plan (hooks.go; processors/jobplan's
	// Planner). Nil answers 501.
	JobPlanner JobPlanner
	// Rescheduler answers /v1/debug/reschedule/{eval_id} (hooks.go;
	// history/rerun.ForAPI). Nil answers 501.
	Rescheduler Rescheduler
	// Exporter answers /v1/operator/log/export (hooks.go;
	// history/export.ForAPI). Nil answers 501.
	Exporter Exporter
	// ReadOnly, when not empty, makes a server over a store no raft node
	// owns (ordo replay): it says why the server is read-only, Node may be
	// nil (the server then leads itself alone), and every request that
	// would change state answers 409 with it (readonly.go).
	ReadOnly string
	// Rebuilds runs this server's projection rebuilds and verifies and
	// reports them (/v1/operator/projections, /v1/agent/health); nil
	// answers 501 there.
	Rebuilds *fsm.Rebuilder
	// Mirror is the Kafka mirror (mirror.go); nil reports it disabled.
	Mirror Mirror
	// Keyring serves the root keyring, JWKS and workload identities
	// (keyring.go); nil serves none of them.
	Keyring *KeyringOptions
	// ACL turns on ACL enforcement (acl.go, authz.go); nil: ACLs disabled.
	ACL *ACLOptions
	// Snapshots saves and restores the whole state
	// (/v1/operator/snapshot, snapshot.go); nil answers 501 there.
	Snapshots Snapshots
	// UnconfirmedReads answers default reads from the leader's state
	// without confirming leadership first: the read path before reads
	// were linearizable, kept only so benchmarks can compare the two.
	// A deposed leader may then answer stale data.
	UnconfirmedReads bool
	// Encrypter seals and opens variable items (variables.go) with the
	// keyring's active root key; nil answers 503 on the variable endpoints.
	Encrypter variables.Encrypter
	// Monitor tees this agent's log to GET /v1/agent/monitor (monitor.go);
	// nil answers 501 there.
	Monitor *logtee.Tee
}

// Server is the HTTP API.
type Server struct {
	cfg  Config
	node raftNode // cfg.Node, or a stand-in on a read-only server
	mux  *http.ServeMux
	fwd  *forwarder
	// follower shares read-index rounds of this server's follower reads.
	follower followerReads
	// patterns are the registered routes, checked against routeAccess.
	patterns []string
	metrics  *apiMetrics
	// historyStatus is WithHistory's History, when it reports its status.
	historyStatus atomic.Pointer[HistoryStatus]
}

// New returns a Server.
func New(cfg Config) (*Server, error) {
	if cfg.Node == nil && cfg.ReadOnly == "" || cfg.FSM == nil || cfg.Pipeline == nil {
		return nil, errors.New("httpapi: Node, FSM and Pipeline are required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.BodyLimit <= 0 {
		cfg.BodyLimit = commands.DefaultBodyLimit
	}
	if cfg.DefaultWait <= 0 {
		cfg.DefaultWait = 5 * time.Minute
	}
	if cfg.MaxWait <= 0 {
		cfg.MaxWait = 10 * time.Minute
	}
	if cfg.StreamHeartbeat <= 0 {
		cfg.StreamHeartbeat = 10 * time.Second
	}
	s := &Server{cfg: cfg, mux: http.NewServeMux(), metrics: newAPIMetrics(cfg.Registerer)}
	s.node = readOnlyNode{self: cfg.Self, reason: cfg.ReadOnly}
	if cfg.Node != nil {
		s.node = cfg.Node
	}
	s.fwd = newForwarder(cfg.Node, cfg.FSM, cfg.Self.ID)
	s.follower.client = &http.Client{Transport: s.fwd.transport}
	s.routes()
	return s, nil
}

// Close releases the server's metrics and idle forwarding connections.
func (s *Server) Close() {
	s.metrics.unregister()
	s.fwd.close()
}

func (s *Server) routes() {
	// Leader-routed: writes, and reads unless ?stale.
	s.handle("GET /v1/namespaces", s.leader(endpoint(s.listNamespaces)))
	s.handle("GET /v1/namespace/{name}", s.leader(endpoint(s.getNamespace)))
	s.handle("POST /v1/namespace/{name}", s.leader(endpoint(s.applyNamespace)))
	s.handle("PUT /v1/namespace/{name}", s.leader(endpoint(s.applyNamespace)))
	s.handle("DELETE /v1/namespace/{name}", s.leader(endpoint(s.deleteNamespace)))
	s.handle("POST /v1/namespace", s.leader(endpoint(s.applyNamespace)))
	s.handle("PUT /v1/namespace", s.leader(endpoint(s.applyNamespace)))
	s.jobRoutes()      // jobs.go
	s.jobVerbRoutes()  // jobverbs.go, scaling.go: validate, evaluate, revert, stable, scale, scaling policies
	s.variableRoutes() // variables.go
	s.serviceRoutes()  // services.go: Nomad-native service discovery, and the client's registrations
	s.allocRoutes()    // allocs.go: evaluations, allocations, deployments, client allocs
	// deploymentallocs.go: a deployment's allocations, as Nomad tools read them.
	s.deploymentAllocRoutes()
	s.handle("GET /v1/history/{kind}/{id...}", s.leader(endpoint(s.entityHistory)))
	// Nodes (nodes.go): Nomad's node API and ordo's client API.
	s.handle("GET /v1/nodes", s.leader(endpoint(s.listNodes)))
	s.handle("GET /v1/node/{id}", s.leader(endpoint(s.getNode)))
	s.handle("POST /v1/node/{id}/eligibility", s.leader(endpoint(s.updateNodeEligibility)))
	s.handle("PUT /v1/node/{id}/eligibility", s.leader(endpoint(s.updateNodeEligibility)))
	s.handle("POST /v1/node/{id}/drain", s.leader(endpoint(s.updateNodeDrain)))
	s.handle("PUT /v1/node/{id}/drain", s.leader(endpoint(s.updateNodeDrain)))
	s.handle("POST /v1/node/{id}/purge", s.leader(endpoint(s.purgeNode)))
	s.handle("PUT /v1/node/{id}/purge", s.leader(endpoint(s.purgeNode)))
	s.handle("GET /v1/client/fs/logs/{id}", s.leaderOnly(endpoint(s.clientFSLogs))) // clientfs.go: proxied to the node
	s.clientRoutes()                                                                // clientroutes.go: files, stats, restart, signal, gc, exec (proxied)
	s.handle("PUT /v1/client/register", s.leader(endpoint(s.registerNode)))
	s.handle("POST /v1/client/register", s.leader(endpoint(s.registerNode)))
	s.handle("PUT /v1/client/{id}/heartbeat", s.leader(endpoint(s.heartbeatNode)))
	s.handle("POST /v1/client/{id}/heartbeat", s.leader(endpoint(s.heartbeatNode)))
	s.handle("PUT /v1/operator/raft/join", endpoint(s.join))
	s.handle("POST /v1/operator/raft/join", endpoint(s.join))
	s.handle("GET "+readIndexPath, endpoint(s.readIndex)) // followerread.go: a follower's read index
	s.membershipRoutes()                                  // membership.go: raft stats, remove-peer, transfer-leadership, autopilot
	s.clusterRoutes()                                     // cluster.go: members, regions, node pools, scheduler config, search
	// Local: every server holds the archive and knows its own state.
	s.eventStreamRoutes() // nomadstream.go: Nomad's event stream, and ordo's own at /v1/operator/log/stream
	s.handle("GET /v1/operator/log", endpoint(s.operatorLog))
	s.eventSchemaRoutes() // eventschema.go: the JSON Schemas of event types
	// History files and decision re-runs (export.go, debug.go), from this server's archive.
	s.handle("GET /v1/operator/log/export", endpoint(s.exportLog))
	s.handle("GET /v1/operator/snapshot", s.leaderOnly(endpoint(s.saveSnapshot))) // snapshot.go
	s.handle("PUT /v1/operator/snapshot", s.leader(endpoint(s.restoreSnapshot)))
	s.handle("POST /v1/operator/snapshot", s.leader(endpoint(s.restoreSnapshot)))
	s.handle("GET /v1/debug/reschedule/{eval_id}", endpoint(s.debugReschedule))
	s.projectionRoutes() // projections.go: rebuild, verify, list (local to this server)
	s.mirrorRoutes()     // mirror.go: the Kafka mirror's status and verify (on the leader)
	s.keyringRoutes()    // keyring.go: root keys, key material for peers, JWKS, identities
	s.aclRoutes()        // acl.go: bootstrap, policies, tokens, roles
	s.launcherRoutes()   // launcher.go: providers, tenants, node requests, instances
	s.csiRoutes()        // csi.go: CSI volumes and plugins
	s.handle("GET /v1/operator/raft/configuration", s.leaderOnly(endpoint(s.raftConfiguration)))
	s.handle("GET /v1/operator/history", endpoint(s.historyStatusHandler)) // attime.go
	s.handle("GET /v1/status/leader", endpoint(s.statusLeader))
	s.handle("GET /v1/status/peers", endpoint(s.statusPeers))
	s.handle("GET /v1/agent/self", endpoint(s.agentSelf))
	s.handle("GET /v1/agent/health", endpoint(s.agentHealth))
	s.monitorRoutes() // monitor.go: GET /v1/agent/monitor, this agent's log as it is written
	s.handle("GET /v1/metrics", endpoint(s.serveMetrics))
	if s.cfg.EnableDebug {
		// Go's profiler, as Nomad's enable_debug serves it; dev agents only by default.
		s.mux.HandleFunc("/debug/pprof/", pprof.Index)
		s.mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		s.mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	}
	// The web UI (ui/): static files, public as Nomad's are; the pages
	// read the API above with the user's token.
	s.mux.Handle(ui.Prefix, ui.Handler())
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/" && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
			http.Redirect(w, r, ui.Prefix, http.StatusTemporaryRedirect)
			return
		}
		writeError(w, &notFoundPath{r.Method + " " + r.URL.Path})
	})
}

// notImplemented is an endpoint this server was built without (no
// planner, exporter, snapshots…): writeError answers it 501.
type notImplemented struct{ err error }

func (e notImplemented) Error() string { return e.err.Error() }
func (e notImplemented) Unwrap() error { return e.err }

type notFoundPath struct{ path string }

func (e *notFoundPath) Error() string { return "no such endpoint: " + e.path }

func (s *Server) handle(pattern string, h http.HandlerFunc) {
	s.patterns = append(s.patterns, pattern)
	s.mux.Handle(pattern, s.deadlines(pattern, s.metrics.instrument(pattern, s.authorize(pattern, h)))) // authz.go, deadlines.go
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if err := checkParams(r); err != nil { // params.go
		writeError(w, err)
		return
	}
	if s.refuseWrite(w, r) { // readonly.go
		return
	}
	s.mux.ServeHTTP(w, r)
}

func writeError(w http.ResponseWriter, err error) {
	status := commands.Status(err)
	var nf *notFoundPath
	if errors.As(err, &nf) {
		status = http.StatusNotFound
	}
	if _, ok := errors.AsType[notImplemented](err); ok {
		status = http.StatusNotImplemented
	}
	var ue *unavailableError
	if errors.As(err, &ue) {
		status = http.StatusServiceUnavailable // attime.go: a past being indexed
	}
	body := api.ErrorBody{Error: err.Error(), Status: status}
	var ve *commands.ValidationError
	if errors.As(err, &ve) {
		body.Field, body.Reason = ve.Field, ve.Reason
	}
	writeJSON(w, status, body)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	_ = enc.Encode(v)
}

func setIndex(w http.ResponseWriter, index uint64) {
	if index == 0 {
		index = 1
	}
	w.Header().Set("X-Nomad-Index", strconv.FormatUint(index, 10))
}

// writeResult answers a successful command.
func writeResult(w http.ResponseWriter, out commands.Outcome) {
	setIndex(w, out.Index)
	writeJSON(w, http.StatusOK, map[string]any{"Index": out.Index, "Duplicate": out.Duplicate})
}

// request returns the command identity carried by r's headers.
func request(r *http.Request) commands.Request {
	id := r.Header.Get("Idempotency-Key")
	if id == "" {
		id = r.Header.Get("X-Ordo-Command-Id")
	}
	return commands.Request{CommandID: id, Actor: actorOf(r)} // authz.go
}

// endpoint adapts a handler that returns its error to an
// http.HandlerFunc: the error is answered here, once, as the JSON error
// body with the status commands.Status gives it (writeError).
func endpoint(h func(http.ResponseWriter, *http.Request) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := h(w, r); err != nil {
			writeError(w, err)
		}
	}
}
