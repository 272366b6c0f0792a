// Package nomadevents turns ordo's log into Nomad's event stream: which
// entities an entry touched and what Nomad calls the change (Map), what a
// subscriber asked for (ParseSubscription) and whether an event matches
// it (Subscription.Match). The HTTP API (commands/httpapi, nomadstream.go)
// reads each entity as it stood at the entry's index and serves the
// events on GET /v1/event/stream.
//
// # Usage
//
//	refs, err := nomadevents.Map(entry)        // the events of one raft index
//	for _, ref := range refs {
//		// read ref's entity at ref.ReadAt(index), then:
//		ev := nomadevents.Event{Topic: ref.Topic, Type: ref.Type, Key: ref.Key, ...}
//		if sub.Match(&ev) { ... }
//	}
//
// # The mapping
//
// An entry gets one Nomad type, as Nomad names the raft request that made
// the change (JobRegistered, PlanResult, AllocationUpdated, NodeDrain,
// ...; see entryType), and every entity its events touch becomes one
// event of that type: Topic the entity's kind, Key its id. An entity an
// entry removed (a purged job, a deregistered node, a deleted token) is
// read as it stood just before the entry, so its payload is what was
// removed. Garbage collection (evals, allocations and deployments
// deleted) and ordo's own events (launcher, CSI, variables, keyring,
// servers) have no Nomad event; the native stream carries them.
//
// # Concurrency
//
// Everything here is a pure function of its arguments; safe for
// concurrent use.
//
// # Invariants
//
//   - Map is deterministic: the same entry gives the same refs, in the
//     order its events name the entities, each entity once.
//   - No ref carries a secret: tokens are named by accessor id only.
package nomadevents
