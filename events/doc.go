// Package events owns what the log holds: the Entry a command appends, the
// Event envelope each state change travels in, the registry of event types
// (name, version, topic, payload type, sensitive fields), the msgpack codec and
// the upcasters that keep every version ever written readable.
//
// # Usage
//
// Domain files (namespace.go, …) declare payload structs and register them in
// init. Commands build events with New; the FSM stamps their index, sequence,
// time and actor with Entry.Stamp before archiving them; readers turn a stored
// event back into its current payload with Decode, which upcasts old versions.
//
// # Concurrency
//
// The registry is filled in init functions and read-only afterwards, so every
// function here may be called from any goroutine.
//
// # Invariants
//
//   - An event's type and version name exactly one payload shape forever; a
//     changed shape is a new version with an upcaster from the previous one.
//   - Encoded fixtures of every version live in testdata and decode in tests.
//   - Fields a type lists as sensitive are redacted by Redacted before an event
//     leaves the cluster.
//   - msgpack's reflection is the reference codec. The types a replay
//     decodes most (the envelope, allocations, client updates, evals and
//     the payloads carrying them) also decode straight from bytes, and
//     allocations encode field by field (eventfast.go, alloccodec.go,
//     updatecodec.go, evalcodec.go, payloadcodec.go); each gives exactly
//     what reflection gives — the same value, the same bytes, or an error
//     where reflection errs — held to it by a test and a fuzz target, and
//     falls back to reflection on any form it does not take. A field added
//     to one of those types is added to its codec (the tests that set
//     every field fail until it is).
package events
