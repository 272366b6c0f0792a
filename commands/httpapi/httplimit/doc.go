// Package httplimit bounds what one HTTP connection may cost a server:
// how long a request's headers and its whole body may take to arrive, how
// long an answer may take to leave, how long a kept-alive connection may
// sit idle, and (through connlimit) how many connections one address may
// hold open. Slow clients are cut off and cost the others nothing.
//
// # Usage
//
// Build every API server with NewServer and serve it on Listen's listener:
//
//	cfg := httplimit.DefaultConfig() // or the agent file's http block
//	srv := httplimit.NewServer(handler, cfg)
//	ln, err := cfg.Listen(ln, "api", registerer)
//	srv.Serve(ln)
//
// Handlers whose answers legitimately outlast WriteTimeout extend their
// own deadlines with net/http's ResponseController, through the helpers
// here: ExtendWrite for an answer that waits once (a blocking query),
// Rolling for a stream (each write gets WriteTimeout from when it starts),
// RollingBody for an upload too large for BodyTimeout (each read gets
// BodyTimeout).
//
// # Concurrency
//
// A Config is a value. The handlers and writers here serve one request
// each, on that request's goroutine.
//
// # Invariants
//
//   - Every request's headers must arrive within ReadTimeout, and its
//     body within BodyTimeout of the headers (unless its route rolls the
//     deadline per read): a client that trickles a body has its request
//     ended and its connection closed once the deadline passes.
//   - Every answer must be written within WriteTimeout of the request's
//     headers, unless its route extended the deadline.
//   - A request without a body, or whose body has been read to its end,
//     has no read deadline while its handler runs: a long handler is not
//     cancelled by a read deadline passing.
package httplimit
