// Package volumewatcher owns the volume watcher: a leader-only processor
// that releases the CSI claims of allocations that stopped or were
// garbage collected, through the unpublish steps — node unpublish (the
// node plugin on the claim's node), controller unpublish (the plugin's
// controller, when the plugin publishes through one), then free — with
// retries, and that collects claims nothing releases otherwise (claim GC:
// a full sweep on a timer).
//
// # Usage
//
// New(Config{Pipeline, State, Detacher, Clock, …}) and run it under the
// supervisor. Decide (decide.go) is the pure step: given a volume, its
// plugin and the claim's node, the next state of each past claim and the
// call it needs. The Watcher owns the goroutine: it wakes on changes to
// the volumes table (and the sweep timer), reads the volumes with past
// claims, makes the plugin calls through the Detacher and records the
// steps with commands/csi.UpdateClaims, many volumes per entry.
//
// # Concurrency
//
// Run is called by one goroutine (the supervisor's); a Watcher is not
// shared. Detacher calls run one at a time, in volume order.
//
// # Invariants
//
//   - A claim moves only forward (unpublishing → node-detached →
//     controller-detached → freed); apply re-checks it, so a step recorded
//     twice (a new leader redoing it) changes nothing.
//   - The node step is skipped when the node is gone, down, has no client
//     API or no longer runs the volume's node plugin (nothing there can
//     unpublish, and the claim must not be held forever); the controller
//     step when
//     no healthy controller publishes the volume (no
//     PUBLISH_UNPUBLISH_VOLUME).
//   - A failed call is retried with exponential backoff (RetryMin to
//     RetryMax) by the Clock; it never blocks other claims.
//   - The calls use the claim's own access and attachment modes (N22),
//     not the volume's current ones.
package volumewatcher
