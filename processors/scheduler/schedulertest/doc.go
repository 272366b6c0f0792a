// Package schedulertest holds the scheduler harness: a MemState, a clock
// and a planner that plays the plan applier (planapply.Evaluate) and can be
// told to reject nodes, committing what it accepts back into the state the
// way the allocs, evals and deployments projections would.
//
// # Usage
//
// Build state with the Harness's State, create evals with NewEval, run them
// with Process, advance time with Advance. Tests only.
//
// # Concurrency
//
// A Harness is used by one goroutine.
package schedulertest
