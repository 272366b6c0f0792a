// Package capacity is capacity on demand: the leader-only processor that
// turns evaluations blocked for lack of capacity in a node pool into node
// requests for the launcher label mapped to that pool, releases the
// requests once they are no longer needed, and returns launched nodes
// that stay idle (docs/capacity.md).
//
// The chain, every step a command and so an event in one history: an
// eval is blocked with failed placements in pool P (capacity exhausted,
// no node in the pool, or distinct_hosts) → this processor files node
// requests for P's label (requestor "capacity:P"), each recorded with the
// evals it is for (CapacityRequested, in the same entry) → a provider launches
// instances → each instance's client registers a node whose meta names
// the instance (local.InstanceMetaKey) → the eval feed unblocks the eval
// and it places → a node without allocations for the pool's idle timeout
// is drained and its request (or instance) deleted, which deletes the
// instance.
//
// # Usage
//
//	p, err := capacity.New(capacity.Config{Pipeline: pipeline, State: fsm,
//		Pools: []capacity.Pool{{Name: "batch", Label: "ubuntu-small", MaxRequests: 10, IdleTimeout: 10 * time.Minute}}})
//	err = p.Run(ctx) // under the supervisor, while this server leads
//
// # Concurrency
//
// Run is one goroutine; it keeps what it follows (non-terminal evals,
// nodes linked to instances, its own requests) in memory, restored from
// the projections when it starts and then followed in the archive, and
// acts only through commands. Decide is a pure function.
//
// # Invariants
//
//   - Bounded: a pool never has more than MaxRequests open or fulfilled
//     requests of this processor.
//   - De-duplicated: requests are filed only for the placements that no
//     open request, no instance still coming and no empty node the
//     blocked eval has not yet seen will serve — one outstanding request
//     per needed instance.
//   - Released: open requests beyond what the blocked evals need (their
//     job stopped, the evals placed) are deleted, but never while an eval
//     of the pool is pending (about to be scheduled).
//   - Idle nodes are returned after IdleTimeout on the processor's clock
//     (a new leader starts the timers again); a returned node is
//     deregistered once its instance is gone.
package capacity
