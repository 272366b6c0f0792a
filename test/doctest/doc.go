// Package doctest runs the documentation: the shell blocks of README.md and
// docs/*.md, as written, against a dev agent built from the tree, so the
// tour and the examples cannot rot. docs/doctest.md is the manual.
//
// # The convention
//
// Every fenced block in the docs names its language. A block fenced
// ```sh is run; one fenced ```sh skip: <reason> is shown but not run (it
// starts agents of its own, follows until interrupted, needs Kafka or a
// cloud), and the reason is required. Other languages (hcl, json, text for
// output and log lines) are never run. A command whose trailing comment
// starts with "exit N:" is expected to exit with N (ordo job plan exits 1
// when it would change something); every other command must exit 0.
//
// # Usage
//
// The test (doctest_test.go) reads the docs with Blocks, joins each doc's
// runnable blocks with Script, and runs the script with bash -e in a
// scratch directory holding a link to docs/, with the ordo binary on PATH
// and ORDO_ADDR pointing at a fresh `ordo agent -dev` (one per doc). A
// failure names the doc, the line and the command.
//
// # Concurrency
//
// Blocks and Script are pure functions.
//
// # Invariants
//
//   - A shell block is either run or says why not.
//   - A line of the script maps back to its doc's line (Script's lines).
package doctest
