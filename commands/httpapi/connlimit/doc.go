// Package connlimit caps how many connections one remote address may hold
// open on a listener at once, as Nomad's http_max_conns_per_client does
// (hashicorp/go-connlimit, which this replaces with a few lines).
//
// # Usage
//
// Wrap the API's listener before serving it:
//
//	ln, err := connlimit.Wrap(ln, connlimit.Config{MaxPerAddr: 100, Name: "api", Registerer: reg})
//	srv.Serve(ln)
//
// A connection past the cap is refused: it is answered with Refusal (by
// default an HTTP 429 naming the cause) and closed at once, before any
// server sees it, and ordo_http_conns_refused_total counts it. Accept
// then goes on to the next connection. The address is the remote IP,
// port ignored: every connection from 127.0.0.1 is one client. SetExempt
// names addresses the cap skips (an agent exempts its fellow servers).
//
// # Concurrency
//
// A Listener is safe for concurrent use; its counts are guarded by one
// mutex, held only to look up and change a count.
//
// # Invariants
//
//   - At most MaxPerAddr connections from one IP that is not exempt are
//     open through the listener at any moment (0: no cap); a connection
//     counts from Accept until its first Close.
//   - A refused connection never reaches the caller of Accept.
package connlimit
