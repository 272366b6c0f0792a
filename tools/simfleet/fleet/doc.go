// Package fleet simulates many client nodes against ordo servers over HTTP,
// through the public client API only (docs/api.md, "Client API"): each
// simulated node registers, heartbeats within the TTL the servers answer,
// watches its allocations with the blocking query
// GET /v1/client/:id/allocations and reports what became of them with
// PUT /v1/client/:id/allocs, as a client running the mock driver would.
//
// # Usage
//
//	f, err := fleet.New(fleet.Config{Servers: []string{"127.0.0.1:4646"}, Nodes: 10000})
//	...
//	go f.Run(ctx)          // until ctx ends (owned by the caller's errgroup or WaitGroup)
//	f.Disconnect(0.1)      // 10% stop every call: heartbeats, watches, updates
//	f.Reconnect(1)         // and come back: register, report, heartbeat ready
//	s := f.Stats()         // counters; Metrics() for Prometheus
//
// The mock driver (mock.go) decides what a node does with what the servers
// answer: a new allocation runs at once (pending → running, reported in
// one update, healthy for its deployment) and completes after
// Config.RunFor (0: runs until stopped); Config.FailRate of allocations fail
// on start instead, chosen by a hash of the seed and the allocation id, so
// a run is reproducible; an allocation the servers want stopped or evicted
// completes. Updates are gathered per node for Config.UpdateBatch and sent
// in one call, as Nomad's client batches them.
//
// A node's session is: register (status initializing), read its
// allocations, report them (always after a reconnect, so N1 can make the
// node ready again), heartbeat ready, then heartbeat at the answered TTL
// less a jitter while a watcher goroutine long-polls its allocations.
// Disconnect cancels the session: the open long-poll is closed and nothing
// is sent until Reconnect; the mock allocations keep running meanwhile and
// their changes are reported on reconnect.
//
// # Connections
//
// Every node holds one long-poll open, so 10,000 nodes are 10,000
// connections to the servers. Long polls use their own http.Transport
// whose idle pool holds one connection per node and server, so a watch
// that returns reuses its connection instead of dialling again. Register
// and update calls share a second transport, heartbeats a third, each
// capped at Config.CallConns connections per server: a call may wait for
// a connection, and that wait is part of the latency measured, but a
// heartbeat never waits behind other nodes' slow updates (a real client's
// would not, and a heartbeat queued past the servers' grace would be a
// miss the simulation caused). The caps are the simulation's: a real
// fleet of 10,000 opens up to 10,000 more connections in a burst of
// updates, which one process could not hold beside the long-polls. Run
// raises the soft RLIMIT_NOFILE towards the hard limit and refuses to
// start when the hard limit is below what the fleet needs (FDsNeeded).
//
// # Concurrency
//
// New, Run, Disconnect, Reconnect, Stats, NodeIDs, Collectors and
// TakeHeartbeatLatencies may be called from any goroutine; Run once. Each
// node has one goroutine (its loop: session start, heartbeats, updates,
// mock completions) and, while connected, one watcher goroutine whose
// answers reach the loop through a one-slot mailbox (latest answer wins).
// Run starts and joins them all. A node's lock (node.mu) guards only its
// wanted connection state and the current session's cancel func.
//
// # Invariants
//
//   - Only the HTTP client API is used; nothing in-process.
//   - Node ids are a pure function of Config.Seed and the node's index, so
//     a restarted fleet with the same seed re-registers the same nodes.
//   - A disconnected node makes no call of any kind.
//   - An allocation state is reported again only when the servers' answer
//     disagrees with it at an index not older than the update that
//     reported it, so slow watch answers do not cause duplicate updates.
package fleet
