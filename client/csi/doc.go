// Package csi owns the client side of CSI: the plugins that plugin tasks
// serve on unix sockets in their task directories (registered by the
// task runner, fingerprinted into the node), the calls the client makes
// to them over the real CSI gRPC API — stage and publish a volume before
// a task that mounts it starts, unpublish and unstage after it stops —
// and the client API the servers call to detach and create volumes.
//
// # Usage
//
// A Manager is created by the client agent. RegisterPlugin and
// DeregisterPlugin follow plugin tasks; Fingerprint returns the node's
// CSIControllerPlugins and CSINodePlugins; Publish and Unpublish serve
// the allocation runner; Handler serves the servers' calls (api.go).
//
// # Concurrency
//
// A Manager is safe for concurrent use; its lock guards the plugin set
// only, never a gRPC call.
//
// # Invariants
//
//   - Every call is idempotent on the plugin side (CSI requires it), so a
//     call retried by the volume watcher or after a client restart is
//     harmless.
//   - A volume is published at a path derived from the allocation and the
//     volume (PublishPath), so unpublish needs no state beyond the claim.
package csi
