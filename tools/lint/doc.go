// Package lint holds the tests that keep ordo's structure: the import
// direction between the top-level packages (storage ← events ← projections
// ← commands ← processors ← cmd), which packages may import Pebble, raft and
// franz-go, and the bans on clocks, randomness and the testing package in
// the packages that must stay pure.
//
// # Usage
//
// `go test ./tools/lint` (part of `make test`).
package lint
