// Package chaos is the harness of the linearizability suite
// (TestLinearizable in test/cluster) and of `make bench`'s chaos figures: it runs
// three ordo servers as child processes over TCP on 127.0.0.1, drives
// concurrent clients doing reads, writes and check-and-set on a few
// registers (variables, and a job guarded by EnforceIndex), brings faults
// on the leader (SIGKILL and restart, SIGSTOP/SIGCONT, a raft partition,
// a graceful leadership transfer when the binary has one) and records
// a history that porcupine checks against Model.
//
// # Usage
//
//	bin, _ := chaos.BuildBinary(dir)
//	res, err := chaos.Run(ctx, chaos.ShortConfig(bin, dir)) // or LongConfig
//	v, err := res.Check(time.Minute, dir) // v.Result, v.HTML, v.Explanation
//	fmt.Print(res.Summary())
//
// Each server's raft advertises the address of a proxy (Network) that can
// cut the server off from the others: a partition on loopback, without
// root. Clients send each request to a random server (followers forward
// to the leader); an operation that fails is recorded and the client
// moves on. A write whose outcome is unknown (a timeout, a lost
// connection, a 5xx) returns at the end of the history and the model
// accepts it whether or not it took effect; a read that fails, or a
// request refused at connect, is left out. Before the check, resolve
// settles the unknown outcomes the answers show (a read of the value
// shows the write took effect; a value nothing showed can be left out),
// which keeps porcupine's search from growing with every subset of them.
//
// # Concurrency
//
// Run owns every goroutine it starts (clients, CPU hogs, proxies, process
// waiters) and joins them before it returns. A Cluster's methods are safe
// for concurrent use.
//
// # Invariants
//
//   - Every write writes a value no other write of the run writes, so a
//     read says which write it saw.
//   - Nothing sleeps to wait for a state: conditions are polled with a
//     deadline; only the fault schedule (quiet time, hold) uses timers.
//   - Servers are killed with their parent where the OS allows (Linux's
//     parent-death signal) and stopped by Close otherwise.
package chaos
