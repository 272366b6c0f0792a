// Package linearizability checks that ordo is linearizable across leader
// failures (DESIGN.md invariant 9): three real servers in child processes
// over TCP, six clients reading, writing and check-and-setting three
// variables (GET/PUT /v1/var/:path, ?cas=N) and a job (PUT /v1/job/:id
// with EnforceIndex and JobModifyIndex), while the leader is SIGKILLed and
// restarted, SIGSTOPped for 4 s, cut off from the others by a proxy in
// front of its raft port, and asked to hand leadership over (`ordo
// operator raft transfer-leadership`). Each server runs with GOMAXPROCS=1 and a
// goroutine of the test burns a core, which widens the window a stale
// read needs. The history is checked with porcupine against a register
// with a modify index per key (chaos.Model): a read must return the
// latest acknowledged write, a write's answer must name its own index, and
// a cas must succeed exactly when the index it expects is current.
// Operations whose outcome is unknown may or may not have happened.
//
// TestLinearizable is a short run (four faults, one of each kind) in
// `make test`; with -long or ORDO_CHAOS=1 (`make chaos`) it is a long run
// of 24 faults and at least 10,000 operations that prints its figures:
// operations, failovers, unknown outcomes, and the unavailability after
// each kind of fault. The harness lives in the chaos package, shared with
// `make bench`'s chaos figures. On a non-linearizable history the test
// fails naming porcupine's HTML visualization of it.
package linearizability
