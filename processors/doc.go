// Package processors holds the goroutines that consume the applied log and
// act through commands like any client: the supervisor that runs
// leader-only processors, and the processors themselves in sub-packages.
//
// # How a processor is built
//
// Every processor has the same shape (processors/drainer is the model):
//
//   - A Config whose field comments state defaults and units, a
//     DefaultConfig, and a Validate. New fills the zero fields from
//     DefaultConfig (defaults.Fill), then calls Validate; a follower's
//     Validate starts with follow.Validate.
//   - Time comes from Config.Clock, a clock.Clock (clock.System
//     by default); tests pass a clocktest.Clock, which moves only when
//     told, or run on testing/synctest's virtual time.
//   - State is read through follow.State (read-only snapshots and the
//     notifier) or a follow.Snapshotter, never a *kv.Store: a processor
//     changes state only by submitting commands.
//   - The decision is a pure function in its own file (decide.go;
//     plan's evaluate.go) that takes the time as an argument; the runner
//     beside it owns the goroutine, the clock and the I/O. tools/lint
//     keeps the decisions free of clocks and randomness, and
//     testdata/*.txt scripts (datadriven) pin them down.
//   - Run(ctx) error, started and joined by the supervisor.
package processors
