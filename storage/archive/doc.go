// Package archive owns the append-only event archive inside the state store:
// every event ever committed, keyed by the raft index and the sequence it
// committed at, never rewritten.
//
// # Usage
//
// The FSM calls Append with its batch for each event of an applied entry;
// replayers and the event stream call Scan from an index. The archive holds
// encoded bytes; package events decodes them.
//
// # Concurrency
//
// Functions take the kv.Reader or kv.Writer they act on; the caller owns it.
//
// # Invariants
//
//   - Keys are "log/" + 8-byte big-endian index + 4-byte big-endian sequence,
//     so a scan yields events in commit order.
//   - The stored length (Len) counts every event appended, and Last names the
//     index of the last one.
package archive
