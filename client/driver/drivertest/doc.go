// Package drivertest is the conformance suite every task driver passes:
// Run exercises the driver.Driver and driver.Handle contracts (Start, Wait,
// Signal, Stop, State, Recover and ErrTaskGone, configuration errors) on
// tasks the driver under test describes.
//
// # Usage
//
// In a driver's tests:
//
//	func TestConformance(t *testing.T) {
//		drivertest.Run(t, func() driver.Driver { return newDriver(t) }, func(kind string) map[string]any {
//			switch kind {
//			case drivertest.KindExit0:
//				return map[string]any{...}
//			...
//			}
//		})
//	}
//
// newDriver must return a fresh driver each call: Recover is tested from a
// second driver, as after a client restart. A driver with a Close() error
// method is closed when its test ends. cfgFor returns the task's config
// block for each Kind; the suite fills in the rest of the TaskConfig (a
// temporary directory, log paths in it, a kill timeout of a few hundred
// milliseconds, the default kill signal SIGTERM).
//
// # Concurrency
//
// Run's subtests run in parallel; newDriver and cfgFor are called from
// several goroutines.
//
// # Invariants
//
//   - The suite waits on conditions with deadlines, never on sleeps: a
//     task that must be ready for signals says so by writing "ready" to
//     its stdout.
//   - Every task the suite starts is stopped or killed before its subtest
//     ends.
package drivertest
