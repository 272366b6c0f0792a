// Package lint holds the tests that keep ordo's structure: the import
// direction between the top-level packages (storage ← events ← projections
// ← commands ← processors ← cmd) and inside projections (the base ←
// rebuild ← fsm; a projection package imports the base only), which
// packages may import Pebble, raft and
// franz-go, and the bans on clocks, randomness and the testing package in
// the packages that must stay pure, and in the processors' decisions
// (the scheduler, and each decide.go beside its runner); that processors,
// the client agent, the commands (but their HTTP layer), the history
// tools and the state store wait only on their Clock; and that every
// behaviour tag (N12, P8)
// used in code or docs/ is explained in docs/behaviours.md, and every
// path the README's map and docs/behaviours.md name exists.
//
// # Usage
//
// `go test ./tools/lint` (part of `make test`).
package lint
