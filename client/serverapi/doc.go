// Package serverapi is the client agent's calls of the servers'
// client API (docs/api.md, "Client API (ordo's own)"): register a node,
// heartbeat, watch the node's allocations with a blocking query, report
// allocation updates, read the job version an allocation runs, and
// register, deregister and watch Nomad-native service instances
// (services.go, docs/services.md).
//
// # Usage
//
//	c, err := serverapi.New([]string{"10.0.0.1:4646", "10.0.0.2:4646"})
//	ttl, err := c.Register(ctx, node)
//	ttl, err = c.Heartbeat(ctx, node.ID, events.NodeStatusReady)
//	if errors.Is(err, serverapi.ErrNodeNotFound) { /* register again */ }
//	list, err := c.Allocations(ctx, node.ID, index, 5*time.Minute)
//	err = c.UpdateAllocs(ctx, node.ID, updates)
//	idx, err := c.RegisterServices(ctx, node.ID, regs)
//	list, idx, err := c.Service(ctx, "default", "web", idx, 5*time.Minute)
//
// The calls go through one api.Client (package api), which tries each
// server in turn.
//
// # Errors
//
// When no server answers, the error wraps api.ErrNoServers. A 4xx answer
// is returned at once as an *api.Error; the 404 of a node the servers do
// not know (heartbeat, alloc update) is also ErrNodeNotFound, and
// AllocIndex names the update an alloc update's 400 refused. A call does
// not retry after a full round: the client's loops back off and call
// again.
//
// # Concurrency
//
// A Client is safe for concurrent use; every call takes a context.
//
// # Invariants
//
//   - A request is sent to at most one server at a time, and to each
//     server at most once per call.
//   - Blocking queries get a request timeout of their wait plus a margin,
//     other calls the client's request timeout.
package serverapi
