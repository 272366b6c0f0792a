// Command ordo is ordo's single binary: `ordo agent` runs a server, and the
// other subcommands are a command-line client of the HTTP API.
//
// # Usage
//
//	ordo agent -dev
//	ordo namespace apply -description "web team" web
//	ordo namespace list -json
//	ordo operator raft list-peers
//	ordo log show -from 1 -all
//	ordo log tail -topic Namespace:web
//
// Flags are spelled the way Nomad spells them, with one dash (-json,
// -data-dir=d); the double-dash form works too. Every client command takes
// -address, which defaults to $ORDO_ADDR or http://127.0.0.1:4646. A failed
// command prints "Error: <message>" on stderr and exits 1.
//
// # Concurrency
//
// A client command runs on the main goroutine and stops on the first error;
// `ordo log tail` and `ordo agent` run until SIGINT or SIGTERM. The agent's
// own goroutines are owned by package agent and joined by its Shutdown.
//
// # Invariants
//
//   - The CLI changes state only through the HTTP API, like any client.
//   - Output meant for people is a table or a list of "Key = value" lines;
//     -json prints what the server answered, with no fields dropped.
//   - In `ordo agent`, flags set on the command line override the -config
//     file, which overrides the defaults (agent.DefaultConfig or, with -dev,
//     agent.DevConfig).
package main
