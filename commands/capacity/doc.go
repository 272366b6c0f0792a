// Package capacity holds capacity on demand's command: filing a node
// request for the blocked evals of a node pool, recorded with the evals
// it is for (docs/capacity.md).
//
// # Usage
//
//	c := &capacity.FileRequest{Pool: "batch", Label: "ubuntu-small", Requestor: "capacity:batch", Evals: ids}
//	_, err := pipeline.Run(ctx, "capacity.file-request", req, c) // c.ID() is the request's id
//
// # Concurrency
//
// A FileRequest is used by one goroutine.
//
// # Invariants
//
//   - The request (NodeRequestCreated) and its link to the evals
//     (CapacityRequested) are one entry: neither is recorded alone.
package capacity
