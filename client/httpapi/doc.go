// Package httpapi is the client agent's own HTTP API: what the servers
// (and the nomad/api client, which asks a node directly) read from a
// node rather than from the cluster's state: a task's logs, and an
// allocation as the client holds it (what it reports to the servers, task
// events included — for an allocation the servers no longer list, the
// only place its last events are):
//
//	GET /v1/client/fs/logs/{alloc_id}?task=&type=stdout|stderr&origin=start|end&offset=&follow=&plain=
//	GET /v1/client/allocation/{alloc_id}
//
// and the rest of Nomad's client routes, for the allocations whose Alloc
// has Controls (Runners'): the allocation's files (fs.go, fsstream.go),
// confined to its directory, a task's secrets refused; its tasks'
// processes' and the host's statistics from /proc (stats.go); restart,
// signal and gc on request (control.go); and the exec websocket
// (exec.go), which runs a command beside a task through its driver:
//
//	GET /v1/client/fs/ls|stat|cat|readat|stream/{alloc_id}?path=…
//	GET /v1/client/allocation/{alloc_id}/stats      GET /v1/client/stats
//	PUT /v1/client/allocation/{alloc_id}/restart|signal
//	GET|PUT /v1/client/allocation/{alloc_id}/gc     GET|PUT /v1/client/gc
//	GET /v1/client/allocation/{alloc_id}/exec?task=&command=&tty=
//
// The logs have Nomad's semantics: the task's log stream is its rotated files,
// oldest first, then its current file (client/driver/exec names them);
// offset counts bytes over that whole stream from its start or end
// (origin); the answer is a stream of JSON frames shaped like Nomad's
// api.StreamFrame, or raw bytes with plain=true; follow keeps reading
// what the task appends, every PollInterval on the injected clock, until
// the task is dead for good and everything was sent, or the caller goes
// away. task may be left out when the allocation has one task. The
// OffsetHeader of the answer says where in the stream it begins. Errors
// are ordo's JSON error body: 404 for an allocation this client does not
// run or a task it does not have, 400 naming a bad parameter.
//
// # Usage
//
//	ln, addr, err := httpapi.Listen("127.0.0.1:0") // addr is what the node advertises
//	api, err := httpapi.New(httpapi.Config{Allocs: httpapi.Runners(c.Runner), Clock: clk})
//	err = api.Serve(ctx, ln) // until ctx ends
//
// # Concurrency
//
// A Server is safe for concurrent use; each request runs on its own
// goroutine (net/http's). Serve owns the HTTP server and returns once
// every request it served has ended: the requests' contexts derive from
// its ctx, so open streams end with it.
//
// # Invariants
//
//   - Only the client's own allocations are served (those Allocs knows).
//   - A stream sends the bytes of the files in stream order, each once,
//     following the driver's copy-truncate rotation by file identity;
//     output rotated away before it was read (more rotations between two
//     polls than files kept) is skipped, as it is lost on disk.
//   - Time comes from Config.Clock only.
package httpapi
