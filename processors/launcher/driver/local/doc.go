// Package local is the launcher's local driver: an instance is an
// `ordo agent -client` process on this machine, with its own directory
// (agent config, data dir, log, pid file) and its own client HTTP port,
// pointed at the servers. It is what makes capacity on demand work end
// to end on one machine (docs/capacity.md).
//
// The client registers a node whose meta carries the instance id under
// InstanceMetaKey ("unique." keys stay out of the node's computed class),
// so the node that registers is linked to its instance. The node pool is
// the pool's node attribute "node_pool" when set, else the provider
// pool's name; "node_class" and "datacenter" attributes set those; every
// attribute is also copied into the node's meta (P21).
//
// # Usage
//
//	d, err := local.New(local.Config{Binary: "/usr/local/bin/ordo", Dir: "/var/lib/ordo/instances",
//		Servers: []string{"127.0.0.1:4646"}})
//	var _ driver.Driver = d
//	defer local.KillAll(dir) // tests: stop every instance process left
//
// # Concurrency
//
// A Driver may be shared by several runners (every generation of every
// local provider): it guards its process table with a mutex. Each started
// process has one goroutine waiting for it to exit, owned by the driver;
// a delete joins it, and Close kills and joins every process left.
//
// # Invariants
//
//   - A create is done when the client has started and written its node
//     id (<dir>/<instance>/data/client/node-id); a process that exits
//     before, or a boot past BootTimeout, fails the create (transient).
//   - A delete stops the whole process group (the client and the tasks it
//     runs) with SIGTERM, then SIGKILL after KillGrace, and removes the
//     instance's directory; an instance whose process this driver did not
//     start (another generation, a restarted agent) is found by its pid
//     file.
package local
