// Package gc is the leader-only garbage collector (Nomad's core
// scheduler's periodic GC): every Interval it runs commands/gc.Collect
// with the configured thresholds through the command pipeline, one
// bounded entry at a time until a round finds nothing.
//
// # Usage
//
//	p, err := gc.New(gc.Config{Pipeline: pipeline, Thresholds: cgc.DefaultThresholds()})
//	sup, err := supervisor.New(cfg, p) // runs it while this server leads
//
// # Concurrency
//
// Run is called by the supervisor on one goroutine; it owns its ticker.
//
// # Invariants
//
//   - It acts only through commands: what it removes is decided on a
//     snapshot and re-checked at apply by ModifyIndex preconditions.
//   - A round that finds nothing appends nothing (N15).
//   - Age is judged from leader times, never from this server's clock at
//     apply; the clock only paces runs.
package gc
