// Package safety holds the end-to-end tests of issue 5's safety
// guarantee (DESIGN.md invariant 6, "replay has no side effects"):
// rebuilding projections and reading the past run projections only — no
// processor acts, nothing is mirrored, nothing is appended.
//
// Each test runs a real dev agent (Pebble on disk, raft over TCP, the HTTP
// API) and compares the raft log's last index, the applied index, the
// archive and the live projections before and after the operation, and
// what the leader's processors did meanwhile:
//
//   - TestTimeTravelAppendsNothing: reads at_index and at_time (history/
//     timetravel) and the versions store's backfill from the archive run
//     beside the live server; the log,
//     the archive and the live projections do not move and no live
//     watcher — which is how processors learn of applied entries — wakes.
//   - TestRebuildAppendsNothing: an online rebuild of every projection
//     (POST /v1/operator/projections/rebuild) appends nothing and ends
//     with the same projections.
//   - TestRebuildDoesNotFeedProcessors: the rebuild's replay of a job's
//     history (its eval pending, then blocked) reaches no processor: the
//     eval feed enqueues nothing and the scheduler decides nothing again.
//
// `ordo replay` (a history file served read-only) is covered in cmd/ordo
// (TestReplayRunsNoProcessor), which owns the replay.
//
// Nothing is mirrored: the Kafka mirror (processors/mirror) is a
// supervisor processor that follows the live notifier and the archive. A
// rebuild moves neither the applied index nor the archive, and time
// travel and replay publish to no live notifier and run no supervisor, so
// the mirror has nothing to send. Once processors/mirror lands, run it on
// kfake in these tests and assert that no record is produced (high-water
// marks unchanged) across each operation.
package safety
