// Package logtee tees an agent's log records to subscribers as they are
// written: the lines `GET /v1/agent/monitor` (Nomad's agent monitor)
// streams, on a server and on a client agent alike.
//
// # Usage
//
// Wrap the agent's handler once and log through the result:
//
//	tee := logtee.New(logger.Handler())
//	logger = slog.New(tee)
//	_ = tee.Register(registry) // subscribers gauge, dropped lines counter
//
// A reader subscribes with its own level and format and reads lines until
// it closes its subscription; Serve does this for an HTTP request, in
// Nomad's frames ({"Data": <base64 of the line>}) or plain text.
//
// # Concurrency
//
// A Tee and every handler derived from it (WithAttrs, WithGroup) are safe
// for concurrent use; so is a Subscription's Close and Dropped. Lines is
// read by one reader.
//
// # Invariants
//
//   - Logging never waits for a subscriber: each has a bounded buffer, a
//     line that does not fit is dropped and counted, and the reader is
//     told how many were dropped before its next line.
//   - A subscriber gets the records at or above its own level, even below
//     the level the wrapped handler writes (a debug monitor of an agent
//     that logs at info); the wrapped handler still gets only what it
//     enables.
//   - With no subscriber the tee costs one atomic load per disabled record.
package logtee
