package httpapi

import (
	"context"
	"net/http"
	"strings"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/acl"
	"github.com/ordoplane/ordo/commands/acl/policy"
)

// access is what a route requires of the caller when ACLs are enabled.
// Exactly one requirement is set.
type access struct {
	public     bool   // nothing: no token is read
	anyone     bool   // any resolved caller, anonymous included
	token      bool   // a real token (not anonymous)
	management bool   // a management token
	ns         string // a namespace capability in ?namespace (default "default")
	nsPath     string // any access to the namespace named by this path value
	node       level  // the node rule
	agent      level  // the agent rule
	operator   level  // the operator rule
	vars       string // a variables capability on the path value "path" in ?namespace
	// inHandler is a namespace capability the handler checks itself with
	// authorizeNamespace, in the namespace it reads from the body.
	inHandler string
	// topics, beside inHandler: the handler checks each topic of an event
	// stream subscription as Nomad does (nomadstream.go).
	topics bool
	// clusterOnly: the cluster secret (ClusterSecretHeader), in every
	// mode; no token is read (servers joining, autopilot's stats).
	clusterOnly bool
	// cluster, beside another requirement: the cluster secret also
	// passes, and with ACLs off it is required (membership changes).
	cluster bool
	// nodeAlloc, beside another requirement: a request naming ?node_id
	// is the client agent of that node, authenticated as its other
	// calls are (clientAgent); the handler answers it only for a live
	// allocation on that node (allocIdentity).
	nodeAlloc bool
}

type level uint8

const (
	none level = iota
	read
	write
)

func ns(c string) access      { return access{ns: c} }
func nodeRule(l level) access { return access{node: l} }
func opRule(l level) access   { return access{operator: l} }

var (
	public      = access{public: true}
	clientAgent = public
	anyone      = access{anyone: true}
	management  = access{management: true}
	// clusterOnly and clusterOrManagement involve the cluster secret
	// (membership.go).
	clusterOnly         = access{clusterOnly: true}
	clusterOrManagement = access{management: true, cluster: true}
)

// routeAccess lists every route's requirement: the one place that says who
// may call what. TestEveryRouteHasAccess fails for a route missing here;
// such a route answers only management tokens.
var routeAccess = map[string]access{
	// Namespaces: reads by anyone with access to the namespace, writes by management (as Nomad).
	"GET /v1/namespaces":          anyone,
	"GET /v1/namespace/{name}":    {nsPath: "name"},
	"POST /v1/namespace/{name}":   management,
	"PUT /v1/namespace/{name}":    management,
	"DELETE /v1/namespace/{name}": management,
	"POST /v1/namespace":          management,
	"PUT /v1/namespace":           management,
	// Jobs.
	"GET /v1/jobs":                     ns(policy.CapListJobs),
	"PUT /v1/jobs":                     {inHandler: policy.CapSubmitJob}, // registerJob: the job's Namespace
	"POST /v1/jobs":                    {inHandler: policy.CapSubmitJob}, // registerJob: the job's Namespace
	"PUT /v1/jobs/parse":               ns(policy.CapParseJob),
	"POST /v1/jobs/parse":              ns(policy.CapParseJob),
	"GET /v1/job/{id}":                 ns(policy.CapReadJob),
	"PUT /v1/job/{id}":                 {inHandler: policy.CapSubmitJob}, // registerJob: the job's Namespace
	"POST /v1/job/{id}":                {inHandler: policy.CapSubmitJob}, // registerJob: the job's Namespace
	"DELETE /v1/job/{id}":              ns(policy.CapSubmitJob),
	"GET /v1/job/{id}/summary":         ns(policy.CapReadJob),
	"GET /v1/job/{id}/versions":        ns(policy.CapReadJob),
	"PUT /v1/job/{id}/dispatch":        ns(policy.CapDispatchJob),
	"POST /v1/job/{id}/dispatch":       ns(policy.CapDispatchJob),
	"PUT /v1/job/{id}/plan":            ns(policy.CapSubmitJob),
	"POST /v1/job/{id}/plan":           ns(policy.CapSubmitJob),
	"PUT /v1/job/{id}/periodic/force":  ns(policy.CapSubmitJob),
	"POST /v1/job/{id}/periodic/force": ns(policy.CapSubmitJob),
	"GET /v1/job/{id}/allocations":     ns(policy.CapReadJob),
	"GET /v1/job/{id}/evaluations":     ns(policy.CapReadJob),
	"GET /v1/job/{id}/deployments":     ns(policy.CapReadJob),
	"GET /v1/job/{id}/deployment":      ns(policy.CapReadJob),
	"GET /v1/history/{kind}/{id...}":   ns(policy.CapReadJob),
	// Job verbs and scaling (jobverbs.go, scaling.go), with Nomad's capabilities.
	"PUT /v1/validate/job":        {inHandler: policy.CapReadJob}, // validateJob: the job's Namespace
	"POST /v1/validate/job":       {inHandler: policy.CapReadJob}, // validateJob: the job's Namespace
	"PUT /v1/job/{id}/evaluate":   ns(policy.CapReadJob),
	"POST /v1/job/{id}/evaluate":  ns(policy.CapReadJob),
	"PUT /v1/job/{id}/revert":     ns(policy.CapSubmitJob),
	"POST /v1/job/{id}/revert":    ns(policy.CapSubmitJob),
	"PUT /v1/job/{id}/stable":     ns(policy.CapSubmitJob),
	"POST /v1/job/{id}/stable":    ns(policy.CapSubmitJob),
	"GET /v1/job/{id}/scale":      ns(policy.CapReadJobScaling),
	"PUT /v1/job/{id}/scale":      ns(policy.CapScaleJob),
	"POST /v1/job/{id}/scale":     ns(policy.CapScaleJob),
	"GET /v1/scaling/policies":    ns(policy.CapListScalingPolicies),
	"GET /v1/scaling/policy/{id}": ns(policy.CapReadScalingPolicy),
	// Evaluations, allocations, deployments.
	"GET /v1/evaluations":                 ns(policy.CapReadJob),
	"GET /v1/evaluations/count":           ns(policy.CapReadJob),
	"DELETE /v1/evaluations":              management, // as Nomad: deleting evals is an operator's last resort
	"PUT /v1/system/gc":                   management,
	"POST /v1/system/gc":                  management,
	"GET /v1/evaluation/{id}":             ns(policy.CapReadJob),
	"GET /v1/evaluation/{id}/allocations": ns(policy.CapReadJob),
	"GET /v1/allocations":                 ns(policy.CapReadJob),
	"GET /v1/allocation/{id}":             ns(policy.CapReadJob),
	"POST /v1/allocation/{id}/stop":       ns(policy.CapAllocLifecycle),
	"PUT /v1/allocation/{id}/stop":        ns(policy.CapAllocLifecycle),
	"GET /v1/deployments":                 ns(policy.CapReadJob),
	"GET /v1/deployment/{id}":             ns(policy.CapReadJob),
	"PUT /v1/deployment/promote/{id}":     ns(policy.CapSubmitJob),
	"POST /v1/deployment/promote/{id}":    ns(policy.CapSubmitJob),
	"PUT /v1/deployment/fail/{id}":        ns(policy.CapSubmitJob),
	"POST /v1/deployment/fail/{id}":       ns(policy.CapSubmitJob),
	"PUT /v1/deployment/pause/{id}":       ns(policy.CapSubmitJob),
	"POST /v1/deployment/pause/{id}":      ns(policy.CapSubmitJob),
	// Deployments as Nomad tools read them (deploymentallocs.go).
	"GET /v1/deployment/allocations/{id}": ns(policy.CapReadJob),
	"GET /v1/client/fs/logs/{id}":         ns(policy.CapReadLogs),
	// Client routes (clientroutes.go), proxied to the node: checked here
	// against ?namespace and by the proxy against the allocation's own,
	// with Nomad's capabilities; the host's stats and a node's gc with
	// the node rule.
	"GET /v1/client/fs/ls/{id}":               ns(policy.CapReadFS),
	"GET /v1/client/fs/stat/{id}":             ns(policy.CapReadFS),
	"GET /v1/client/fs/cat/{id}":              ns(policy.CapReadFS),
	"GET /v1/client/fs/readat/{id}":           ns(policy.CapReadFS),
	"GET /v1/client/fs/stream/{id}":           ns(policy.CapReadFS),
	"GET /v1/client/allocation/{id}/stats":    ns(policy.CapReadJob),
	"PUT /v1/client/allocation/{id}/restart":  ns(policy.CapAllocLifecycle),
	"POST /v1/client/allocation/{id}/restart": ns(policy.CapAllocLifecycle),
	"PUT /v1/client/allocation/{id}/signal":   ns(policy.CapAllocLifecycle),
	"POST /v1/client/allocation/{id}/signal":  ns(policy.CapAllocLifecycle),
	"GET /v1/client/allocation/{id}/gc":       ns(policy.CapSubmitJob),
	"PUT /v1/client/allocation/{id}/gc":       ns(policy.CapSubmitJob),
	"GET /v1/client/allocation/{id}/exec":     ns(policy.CapAllocExec),
	"GET /v1/client/stats":                    nodeRule(read),
	"GET /v1/client/gc":                       nodeRule(write),
	"PUT /v1/client/gc":                       nodeRule(write),
	// Nodes. The client agents' own API (register, heartbeat, allocation
	// updates) is clientAgent: Nomad authenticates those calls by the
	// node's secret, not by ACL tokens, and ordo has no node secrets yet.
	"GET /v1/nodes":                   nodeRule(read),
	"GET /v1/node/{id}":               nodeRule(read),
	"GET /v1/node/{id}/allocations":   nodeRule(read),
	"POST /v1/node/{id}/eligibility":  nodeRule(write),
	"PUT /v1/node/{id}/eligibility":   nodeRule(write),
	"POST /v1/node/{id}/drain":        nodeRule(write),
	"PUT /v1/node/{id}/drain":         nodeRule(write),
	"POST /v1/node/{id}/purge":        nodeRule(write),
	"PUT /v1/node/{id}/purge":         nodeRule(write),
	"PUT /v1/client/register":         clientAgent,
	"POST /v1/client/register":        clientAgent,
	"PUT /v1/client/{id}/heartbeat":   clientAgent,
	"POST /v1/client/{id}/heartbeat":  clientAgent,
	"PUT /v1/client/{id}/allocs":      clientAgent,
	"POST /v1/client/{id}/allocs":     clientAgent,
	"GET /v1/client/{id}/allocations": clientAgent,
	// Services (services.go): read-job to read, submit-job to delete, in
	// the namespace, as Nomad's; a list of every namespace shows those
	// the caller may read. Clients register their allocations' instances.
	"GET /v1/services":                         {inHandler: policy.CapReadJob}, // listServices: ?namespace, or each item's for "*"
	"GET /v1/service/{name}":                   ns(policy.CapReadJob),
	"DELETE /v1/service/{name}/{id}":           ns(policy.CapSubmitJob),
	"PUT /v1/client/{id}/services":             clientAgent,
	"POST /v1/client/{id}/services":            clientAgent,
	"PUT /v1/client/{id}/services/deregister":  clientAgent,
	"POST /v1/client/{id}/services/deregister": clientAgent,
	// Servers joining each other present the cluster secret, in every
	// mode (membership.go); changing the servers takes the secret or,
	// with ACLs on, a management token.
	"PUT /v1/operator/raft/join":                 clusterOnly,
	"POST /v1/operator/raft/join":                clusterOnly,
	"GET /v1/operator/raft/stats":                clusterOnly,
	"DELETE /v1/operator/raft/peer":              clusterOrManagement,
	"PUT /v1/operator/raft/transfer-leadership":  clusterOrManagement,
	"POST /v1/operator/raft/transfer-leadership": clusterOrManagement,
	"GET /v1/operator/autopilot/health":          opRule(read),
	"GET /v1/operator/autopilot/configuration":   opRule(read),
	// Event streams (nomadstream.go): Nomad's checks each topic asked for
	// itself, as Nomad does; ordo's own is an operator's.
	"GET /v1/event/stream":        {inHandler: policy.CapReadJob, topics: true},
	"GET /v1/operator/log/stream": opRule(read),
	// The log, its history tools and the projections: operators.
	"GET /v1/operator/log":                  opRule(read),
	"GET /v1/operator/log/export":           management,
	"GET /v1/operator/snapshot":             management,
	"PUT /v1/operator/snapshot":             management,
	"POST /v1/operator/snapshot":            management,
	"GET /v1/debug/reschedule/{eval_id}":    opRule(read),
	"GET /v1/events/schema":                 anyone,
	"GET /v1/events/schema/{type}":          anyone,
	"GET /v1/operator/projections":          opRule(read),
	"POST /v1/operator/projections/rebuild": opRule(write),
	"PUT /v1/operator/projections/rebuild":  opRule(write),
	"POST /v1/operator/projections/verify":  opRule(write),
	"PUT /v1/operator/projections/verify":   opRule(write),
	"GET /v1/operator/projections/job":      opRule(read),
	"DELETE /v1/operator/projections/job":   opRule(write),
	"GET /v1/operator/mirror":               opRule(read),
	"POST /v1/operator/mirror/verify":       opRule(write),
	"PUT /v1/operator/mirror/verify":        opRule(write),
	"GET /v1/operator/raft/configuration":   opRule(read),
	"GET /v1/operator/history":              opRule(read),
	"GET /v1/status/leader":                 public,
	"GET /v1/status/peers":                  public,
	"GET /v1/operator/raft/read-index":      public, // an index, as X-Nomad-Index shows
	"GET /v1/agent/self":                    {agent: read},
	"GET /v1/agent/health":                  public,
	"GET /v1/metrics":                       public,
	// Agent monitor (monitor.go): the agent's log, its node's or another
	// server's, with the agent read rule as Nomad's.
	"GET /v1/agent/monitor": {agent: read},
	// The launcher (launcher.go): operators read and write providers,
	// tenants, node requests and instances.
	"GET /v1/providers":            opRule(read),
	"POST /v1/providers":           opRule(write),
	"PUT /v1/providers":            opRule(write),
	"GET /v1/provider/{name}":      opRule(read),
	"DELETE /v1/provider/{name}":   opRule(write),
	"GET /v1/tenants":              opRule(read),
	"POST /v1/tenant/{name}":       opRule(write),
	"PUT /v1/tenant/{name}":        opRule(write),
	"DELETE /v1/tenant/{name}":     opRule(write),
	"GET /v1/node-requests":        opRule(read),
	"POST /v1/node-requests":       opRule(write),
	"PUT /v1/node-requests":        opRule(write),
	"GET /v1/node-request/{id}":    opRule(read),
	"DELETE /v1/node-request/{id}": opRule(write),
	"GET /v1/instances":            opRule(read),
	"GET /v1/instance/{id}":        opRule(read),
	"POST /v1/instance/{id}/hold":  opRule(write),
	"PUT /v1/instance/{id}/hold":   opRule(write),
	"DELETE /v1/instance/{id}":     opRule(write),
	"GET /v1/components":           opRule(read),
	// A server's component reports itself alive (launcher.go).
	"PUT /v1/component/{kind}/{server}/heartbeat": clusterOrManagement,
	// CSI volumes and plugins (csi.go): volume capabilities in the
	// volume's namespace (a list of every namespace also filters item by
	// item; a register or create checks the body's namespace); plugins are
	// read with the node rule.
	"GET /v1/volumes":                   ns(policy.CapCSIListVolume),
	"GET /v1/volume/csi/{id}":           ns(policy.CapCSIReadVolume),
	"PUT /v1/volume/csi/{id}":           {inHandler: policy.CapCSIWriteVolume},
	"POST /v1/volume/csi/{id}":          {inHandler: policy.CapCSIWriteVolume},
	"DELETE /v1/volume/csi/{id}":        ns(policy.CapCSIWriteVolume),
	"PUT /v1/volume/csi/{id}/create":    {inHandler: policy.CapCSIWriteVolume},
	"POST /v1/volume/csi/{id}/create":   {inHandler: policy.CapCSIWriteVolume},
	"DELETE /v1/volume/csi/{id}/delete": ns(policy.CapCSIWriteVolume),
	"PUT /v1/volume/csi/{id}/detach":    ns(policy.CapCSIWriteVolume),
	"POST /v1/volume/csi/{id}/detach":   ns(policy.CapCSIWriteVolume),
	"DELETE /v1/volume/csi/{id}/detach": ns(policy.CapCSIWriteVolume),
	"GET /v1/plugins":                   nodeRule(read),
	"GET /v1/plugin/csi/{id}":           nodeRule(read),
	// Variables (variables.go): capabilities on the variable's path. A
	// list needs some access to the namespace; ACLAllowsVariable filters it.
	"GET /v1/vars":             VariablesAccess(policy.VarList),
	"GET /v1/var/{path...}":    VariablesAccess(policy.VarRead),
	"PUT /v1/var/{path...}":    VariablesAccess(policy.VarWrite),
	"POST /v1/var/{path...}":   VariablesAccess(policy.VarWrite),
	"DELETE /v1/var/{path...}": VariablesAccess(policy.VarDestroy),
	// The keyring (keyring.go): reading keys' metadata is an operator's,
	// changing them management's; the JWKS and the servers' key fetch
	// authenticate themselves.
	"GET /v1/operator/keyring/keys":        opRule(read),
	"PUT /v1/operator/keyring/rotate":      management,
	"POST /v1/operator/keyring/rotate":     management,
	"DELETE /v1/operator/keyring/key/{id}": management,
	"PUT /v1/operator/keyring/gc":          management,
	"GET /v1/operator/keyring/key/{id}":    public,
	"GET /.well-known/jwks.json":           public,
	// The client running an allocation fetches its tasks' identities
	// for their templates (?node_id, checked by allocIdentity).
	"GET /v1/allocation/{id}/identity": {management: true, nodeAlloc: true},
	// ACLs (acl.go): bootstrap needs no token; the rest is management's,
	// except a token reading itself.
	"PUT /v1/acl/bootstrap":           public,
	"POST /v1/acl/bootstrap":          public,
	"GET /v1/acl/policies":            management,
	"GET /v1/acl/policy/{name}":       management,
	"PUT /v1/acl/policy/{name}":       management,
	"POST /v1/acl/policy/{name}":      management,
	"DELETE /v1/acl/policy/{name}":    management,
	"GET /v1/acl/tokens":              management,
	"PUT /v1/acl/token":               management,
	"POST /v1/acl/token":              management,
	"GET /v1/acl/token/self":          {token: true},
	"GET /v1/acl/token/{accessor}":    management,
	"PUT /v1/acl/token/{accessor}":    management,
	"POST /v1/acl/token/{accessor}":   management,
	"DELETE /v1/acl/token/{accessor}": management,
	"GET /v1/acl/roles":               management,
	"PUT /v1/acl/role":                management,
	"POST /v1/acl/role":               management,
	"GET /v1/acl/role/{id}":           management,
	"PUT /v1/acl/role/{id}":           management,
	"POST /v1/acl/role/{id}":          management,
	"DELETE /v1/acl/role/{id}":        management,
	"GET /v1/acl/role/name/{name}":    management,
	// Cluster (cluster.go, nodepools.go, schedconfig.go, search.go):
	// members and regions as Nomad's agent and region rules; node pools
	// with the node rule; the scheduler and autopilot configurations with
	// the operator rule; search filters its answers item by item.
	"GET /v1/agent/members":                     {agent: read},
	"GET /v1/agent/servers":                     {agent: read},
	"GET /v1/regions":                           public,
	"PUT /v1/system/reconcile/summaries":        management,
	"GET /v1/node/pools":                        nodeRule(read),
	"PUT /v1/node/pools":                        nodeRule(write),
	"POST /v1/node/pools":                       nodeRule(write),
	"GET /v1/node/{kind}/{name}":                nodeRule(read),
	"DELETE /v1/node/pool/{name}":               nodeRule(write),
	"GET /v1/node/pool/{name}/nodes":            nodeRule(read),
	"GET /v1/node/pool/{name}/jobs":             nodeRule(read),
	"GET /v1/operator/scheduler/configuration":  opRule(read),
	"PUT /v1/operator/scheduler/configuration":  opRule(write),
	"POST /v1/operator/scheduler/configuration": opRule(write),
	"PUT /v1/operator/autopilot/configuration":  opRule(write),
	"POST /v1/operator/autopilot/configuration": opRule(write),
	"PUT /v1/search":                            anyone,
	"POST /v1/search":                           anyone,
	"PUT /v1/search/fuzzy":                      anyone,
	"POST /v1/search/fuzzy":                     anyone,
}

// VariablesAccess is the requirement of a variables route: op (read,
// write, list, destroy) on the variables path in the request's path value
// "path" (empty for a list: the ?prefix), in ?namespace. The variables
// endpoints enter their routes in routeAccess with it.
func VariablesAccess(op string) access { return access{vars: op} }

type identityKey struct{}

// identityOf returns the caller resolved by the ACL check; nil when ACLs
// are disabled.
func identityOf(r *http.Request) *acl.Identity {
	id, _ := r.Context().Value(identityKey{}).(*acl.Identity)
	return id
}

// actorOf is the actor a command of r records: the caller's AccessorID.
func actorOf(r *http.Request) string {
	return identityOf(r).Actor()
}

// tokenOf returns the request's token: X-Nomad-Token, else a bearer
// Authorization header.
func tokenOf(r *http.Request) string {
	if t := r.Header.Get("X-Nomad-Token"); t != "" {
		return t
	}
	if a := r.Header.Get("Authorization"); len(a) > 7 && strings.EqualFold(a[:7], "bearer ") {
		return strings.TrimSpace(a[7:])
	}
	return ""
}

// errPermissionDenied is Nomad's answer to a caller without the capability.
var errPermissionDenied = &commands.ForbiddenError{Reason: "Permission denied"}

// authorize wraps h with the ACL check of the route's pattern.
func (s *Server) authorize(pattern string, h http.HandlerFunc) http.HandlerFunc {
	need, listed := routeAccess[pattern]
	return func(w http.ResponseWriter, r *http.Request) {
		if listed && (need.clusterOnly || need.cluster) { // membership.go
			switch {
			case s.clusterSecretOK(r):
				h(w, r)
				return
			case need.clusterOnly || s.cfg.ACL == nil:
				writeError(w, s.secretError())
				return
			}
		}
		if s.cfg.ACL == nil || listed && need.public || listed && need.nodeAlloc && r.URL.Query().Get("node_id") != "" {
			h(w, r)
			return
		}
		id, err := s.cfg.ACL.Resolver.Resolve(tokenOf(r))
		if err != nil {
			writeError(w, err)
			return
		}
		if !listed {
			need = management
		}
		if !allowed(need, id, r) {
			writeError(w, errPermissionDenied)
			return
		}
		h(w, r.WithContext(context.WithValue(r.Context(), identityKey{}, id)))
	}
}

// requestNamespace is the ?namespace of r, "default" when absent.
func requestNamespace(r *http.Request) string {
	if ns := r.URL.Query().Get("namespace"); ns != "" {
		return ns
	}
	return "default"
}

func allowed(need access, id *acl.Identity, r *http.Request) bool {
	a := id.ACL
	switch {
	case need.anyone, need.inHandler != "":
		return true
	case need.token:
		return id.Token != nil
	case need.management:
		return a.IsManagement()
	case need.ns != "":
		return a.AllowNamespace(requestNamespace(r), need.ns)
	case need.nsPath != "":
		return a.AllowAnyNamespace(r.PathValue(need.nsPath))
	case need.node != none:
		return a.AllowNode(need.node == write)
	case need.agent != none:
		return a.AllowAgent(need.agent == write)
	case need.operator != none:
		return a.AllowOperator(need.operator == write)
	case need.vars != "":
		path := r.PathValue("path")
		if path == "" { // a list: filtered item by item with ACLAllowsVariable
			return a.AllowAnyNamespace(requestNamespace(r))
		}
		return a.AllowVariable(requestNamespace(r), path, need.vars)
	}
	return false
}

// authorizeNamespace checks capability c in namespace ns for a handler
// whose namespace comes from the body (a job's Namespace), not the query.
func (s *Server) authorizeNamespace(r *http.Request, ns, c string) error {
	if s.cfg.ACL == nil {
		return nil
	}
	id := identityOf(r)
	if id == nil || !id.ACL.AllowNamespace(ns, c) {
		return errPermissionDenied
	}
	return nil
}

// ACLAllowsVariable reports whether the caller of r may do op (read,
// write, list, destroy) on the variable at path in namespace ns; always
// true when ACLs are disabled. Variable lists filter their items with it.
func (s *Server) ACLAllowsVariable(r *http.Request, ns, path, op string) bool {
	if s.cfg.ACL == nil {
		return true
	}
	id := identityOf(r)
	return id != nil && id.ACL.AllowVariable(ns, path, op)
}
