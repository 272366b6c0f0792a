// Package scheduler owns the scheduling algorithms: the pure decision of
// what to place, stop and mark for one evaluation, given a read-only State.
//
// # Usage
//
// A worker takes a snapshot of the projections at the eval's wait index or
// later (N2), wraps it as a State and calls Compute; it hands the Plan to
// the plan applier (package planapply) and records the plan's failed
// placements, queued counts, blocked eval and follow-ups on the eval.
// MemState is an in-memory State for tests, the planner harness
// (package schedulertest) and benchmarks.
//
// Schedulers by job type:
//   - service and batch (reconcile.go): per task group, the desired count
//     against the live allocations named job.group[i]; missing ones are
//     placed, extras stopped highest index first; a stopped or purged job
//     stops everything; allocations on down nodes are lost and replaced; on
//     disconnected nodes, for groups with a disconnect block (or
//     max_client_disconnect), they become unknown and are replaced only if
//     disconnect.replace, and lost after lost_after; when their node is
//     ready again the original is kept and its replacement stopped (or the
//     reverse with reconcile = "keep_replacement"); allocations marked to
//     migrate are replaced elsewhere and stopped; failed ones are
//     rescheduled per the group's reschedule policy, at once or through a
//     delayed follow-up eval; batch jobs never replace complete allocations;
//     outdated allocations whose tasks changed are replaced, max_parallel at
//     a time under a deployment for service jobs; with update.canary, the
//     deployment first places that many canaries of the new version beside
//     the old allocations and replaces nothing else until it is promoted
//     (canary.go).
//   - system and sysbatch (system.go): one allocation per group on every
//     feasible node; a sysbatch allocation that finished is not placed
//     again, and the job is complete once every feasible node's allocation
//     is terminal (N24).
//
// Feasibility (feasible.go): node ready (never initializing, N1), eligible,
// not draining, datacenter (with wildcards), node pool, drivers detected
// and healthy, constraints on ${attr.*}, ${meta.*} and ${node.*},
// host volumes (present, writable unless the request is read-only) and the
// host networks a group's ports name, and distinct_hosts; each node's verdict is recorded per computed class for
// the blocked eval (class.go). Ranking (rank.go): for each placement the
// scheduler visits nodes in the eval's walk (walk.go) from where the last
// placement stopped, scores up to max(2, ⌈log2 n⌉) nodes that fit (2 for
// batch) by bin packing (or spread), with a job anti-affinity penalty,
// and takes the best. The walk is drawn from a generator seeded from the
// eval id: nodes fall into groups of about 32 by a hash of their id (the
// same groups for every eval), taken in an order of the eval's own, each
// group's nodes shuffled. With binpack a plan keeps to the groups it has
// entered, going round them, and takes in the next group only when a
// placement found too few nodes that fit in them, so plans computed
// concurrently, starting in different groups, seldom fill the same
// nodes and are seldom refused in part by the plan applier; with spread
// every node is open from the start. Ports (ports.go) are node resources beside CPU,
// memory and disk: a node where a static port is reserved, held by a live
// allocation or given in the plan is exhausted; dynamic ports are drawn
// from the node's range with a generator seeded from the eval, the
// allocation's name and the node. The per-node usage (State.NodeUsage,
// the allocs projection's usage table) lists the ports held, so no
// node's allocations are read. Every failed placement fills an
// AllocMetric and asks for a blocked eval.
//
// # Concurrency
//
// Compute may run concurrently on different States or on the same State
// as long as nobody mutates it; it keeps no package state.
//
// # Invariants
//
//   - Compute is pure: no clock (it uses the eval's leader times), no
//     global randomness, no map-order dependence. The same eval against
//     the same State yields a plan that encodes to the same bytes, with
//     ids derived from the eval id (DeriveID).
//   - A plan never mints an allocation or follow-up id the State already
//     holds: an eval computed again after its plan was partly refused
//     skips the ids its earlier attempts committed (nextID), so a retry
//     never moves an allocation to another node.
//   - The plan records the State's index it was computed at.
//   - Compute never places on a node that is not ready, eligible and
//     undrained, nor beyond a node's resources less its reserved resources,
//     its live allocations and what the plan already placed on it, nor
//     gives a host port the node reserves, a live allocation there holds
//     (unless the plan stops it) or the plan already gave there.
package scheduler
