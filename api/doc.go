// Package api is ordo's HTTP API as Go: the request and response types
// the servers encode (Nomad-shaped where Nomad has the endpoint; ordo's own
// shapes elsewhere, see docs/api.md) and one Client that every Go caller
// of the API uses: the CLI, the client agent, simfleet and the bench.
//
// It imports nothing of ordo but events, so commands, processors, client,
// cmd and tools may all import it (tools/lint).
//
// # Usage
//
//	c, err := api.New([]string{"10.0.0.1:4646", "10.0.0.2:4646"},
//		api.WithToken(token), api.WithNamespace("prod"))
//	var list []api.JobListStub
//	err = c.Get(ctx, "/v1/jobs", nil, &list)
//	meta, err := c.Query(ctx, api.Pathf("/v1/client/%s/allocations", nodeID),
//		&api.QueryOptions{Index: last, Wait: time.Minute}, &allocs)
//	if e, ok := errors.AsType[*api.Error](err); ok && e.Status == 400 {
//		fmt.Println("invalid", e.Field, e.Reason)
//	}
//
// # Errors
//
// A call tries each server in turn, starting with the one that answered
// last, moving on when a server cannot be reached or answers 5xx (no
// leader, shutting down). When none answers, the error wraps
// ErrNoServers and every server's error (an *Error for a 5xx). A 4xx
// answer is returned at once as an *Error carrying the status and, for a
// 400, the invalid field and the reason.
//
// # Concurrency
//
// A Client is safe for concurrent use; every call takes a context.
//
// # Invariants
//
//   - A request is sent to at most one server at a time, and to each
//     server at most once per call.
//   - A blocking query's attempt is bounded by its wait plus a margin;
//     other calls by the client's request timeout, when one is set.
//   - The types encode exactly the JSON the servers write: the server's
//     handlers encode these same types.
package api
