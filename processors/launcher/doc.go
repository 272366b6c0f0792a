// Package launcher is the leader-only processor that fulfils node
// requests: per provider generation, one runner goroutine that reads the
// projections, decides, advances its driver's create and delete state
// machines (P5, P17) and acts only through commands. What to do with
// each request is decided by pure functions (decide.go: the pass's
// facts, its tally so far and the request in, steps out) that the
// runner (handle.go) carries out; testdata/decide holds their scripts.
// A pass's commands go to the log together, one group (one entry,
// Pipeline.RunGroup) for what the machines reported and one for the
// pass's decisions, split only where a command must be decided on
// another's effect (group.go). Each runner keeps an
// incremental view of the open requests (view.go: loaded once, then kept
// current from the archive's events since the index it holds); a runner
// of a HostDriver (static) registers its hosts and hands them out only
// when reachable (static.go); the launcher registers the pools it runs
// as its component, seen live by every server (component.go, P10). A
// component's liveness is no log entry: Liveness (liveness.go), also run
// while the server leads, keeps each component's last heartbeat in
// memory and deregisters one silent for its TTL.
//
// # Usage
//
//	l, err := launcher.New(launcher.Config{Pipeline: p, State: fsm, Drivers: launcher.Drivers{"sim": simFactory}})
//	err = l.Run(ctx) // under the supervisor, while this server leads
//
//	live, err := launcher.NewLiveness(launcher.LivenessConfig{Pipeline: p, State: fsm})
//	err = live.Run(ctx)                        // under the supervisor too
//	ttl, err := live.Heartbeat("launcher", id) // the API's heartbeat route
//
// # Concurrency
//
// Run starts one runner per provider generation and joins them before it
// returns; a runner owns its driver and machines. A new configuration
// (P6) stops the old generation's runner (it goes idle: no further
// driver calls) before the new one starts with a clean slate (P2). Run's
// own goroutine registers the component and deregisters it when Run
// returns. Liveness's Heartbeat and Liveness may be called from any
// goroutine while its Run works; one lock guards its heartbeats and is
// never held while a command runs.
//
// # Invariants
//
//   - The log records a component's changes only (registered, its pools
//     changed, deregistered or gone stale): an idle launcher appends
//     nothing. A server that starts leading starts every registered
//     component's TTL afresh.
//   - A pass's commands are checked at apply one after the other, each
//     on its own: a refused one refuses no other. The pass's tally
//     counts each command as done once queued, so a group holds no more
//     than the quota; the tenant limit (P13) and a ready instance's
//     assignment (P4) are preconditions checked after the commands
//     before them in the group.
//   - Requests are handled in relative-priority order and a provider
//     yields a request to an unpaused provider of better priority that
//     can serve it (P11).
//   - A provider declines only for the request's own labels (P1), or
//     when no pool or quota could ever hold it (P7, P9): never because it
//     is merely busy. A min-ready request is declined only when really at
//     quota (P23).
//   - Quota counts every live instance, building ones included (P19),
//     from the driver's figures or, on a transient error, the cached
//     ones (P14). Tenant limits hold across providers (P13) by an
//     at-apply precondition.
//   - A quota refusal aborts the instance, pauses the provider and the
//     request is relaunched when quota allows (P24); while paused the
//     provider still declines what it can never serve (P7); an error
//     while paused unpauses and releases the request (P27).
//   - A permanent error marks the label errored and fails its requests
//     at once (P2); transient ones are retried up to LaunchRetries.
//   - Declines and short quota are logged at info with the reason
//     (P15, P25).
//   - Nothing is accepted before the driver told the quota once (P9).
//   - A static provider never creates an instance and never pauses: an
//     unreachable host leaves its request requested and undeclined (P8);
//     its hosts are registered on start and on a config change (P29).
package launcher
