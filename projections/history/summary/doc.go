// Package summary explains events for people: for each event type, a
// one-line summary of what the event did to the entity a timeline is about
// ("placed on node n1 by eval e1", "client status pending → running",
// "registered version 3 (count web 2 → 3)") and the fields it changed, old
// and new.
//
// "What changed" needs the state before the event, so a Tracker folds one
// entity's events in commit order and keeps the last known value of every
// field it summarises. A timeline page that starts mid-history feeds the
// tracker the entity's earlier events first and keeps only the lines of
// the page.
//
// The same event reads differently from each entity it touches: an
// AllocsPlaced is "placed on node n1 by eval e1" on the allocation's
// timeline, "alloc web.web[0] placed by eval e1" on the node's and "2
// allocs placed by eval e1" on the job's. Events an entity is not the
// subject of (a job's events on its namespace's timeline) get a neutral
// description and no changes.
//
// # Usage
//
//	t := summary.NewTracker(events.KindAlloc, id)
//	for _, ev := range entityEvents { // in commit order
//		line := t.Next(ev)
//	}
//
// # Concurrency
//
// A Tracker belongs to one goroutine. The package holds no other state.
//
// # Invariants
//
//   - Sensitive fields never show: a summariser reads only the fields it
//     names, and an event type whose registry entry lists sensitive fields
//     is summarised by the generic fallback from its redacted payload
//     (events.Redacted), with no changes.
//   - An event type with no summariser gets the generic fallback: its type
//     name and its redacted payload as JSON.
//   - Next never fails: an event that cannot be decoded is summarised as
//     such, so one bad event does not hide an entity's history.
//   - Output is deterministic: maps are walked in key order.
package summary
