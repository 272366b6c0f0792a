// Package services is the client's side of Nomad-native service
// discovery: it registers the services of the allocations the client
// runs with the servers, runs their health checks, and feeds the checks
// into deployment health and check_restart.
//
// # Usage
//
//	m, err := services.New(services.Config{Servers: serverapiClient, Node: c.Node, Clock: clk})
//	go m.Run(ctx)       // sends registrations, batched, with retries
//	allocrunner.Config{…, Services: m} // each runner gets a hook (ForAlloc)
//	defer m.Close()     // after the runners: stops and joins every check
//
// A runner's hook (Hook) is told of every change of its allocation
// (allocrunner.ServiceView). Instances builds what the allocation
// registers from that view, a pure function: one registration per
// service block of a running task (and of the group while any task
// runs), provider "nomad", id _nomad-task-<alloc>-<task or
// group-<group>>-<service>-<port label>, strings interpolated with the
// task's environment (client/taskenv), address and port from the
// allocation's ports by address_mode, canary tags for a canary. A
// service whose task stops is deregistered; an allocation being killed
// has every service deregistered before its tasks' shutdown delay.
//
// Checks (check.go) run on their interval on the Manager's clock: http
// (2xx passing, 429 warning, else critical), tcp (a connection within the
// timeout) and script (exit 0 passing, 1 warning, else critical; through
// the task driver's exec, or as a process with the task's environment
// when the driver cannot exec). Status (status.go) applies
// success_before_passing and failures_before_critical; only a status
// change updates the registration. Restarter counts check_restart's
// unhealthy results in a row, past grace.
//
// # Concurrency
//
// A Manager and its hooks are safe for concurrent use. Run is one loop;
// each check is one goroutine owned by the Manager and joined by Close.
// Locks: a hook's mu before the Manager's mu; neither is held while
// calling into the runner (except ChecksHealthy, which calls nothing).
//
// # Invariants
//
//   - What the servers hold converges to the client's registrations:
//     every change is queued, and a failed call is retried with backoff
//     until it succeeds; a registration is sent again only when it
//     changed.
//   - A restarted client re-registers what still runs: registrations are
//     rebuilt from the allocations' records.
package services
