// Command csi-hostpath is a small CSI plugin (controller and node in one
// process) serving the real CSI gRPC API on a unix socket, for ordo's
// tests and demos: a volume is a directory under -root; publishing it
// bind-mounts that directory at the target path when the plugin runs as
// root (and may mount), else makes the target a symlink to it.
//
// # Usage
//
//	csi-hostpath -endpoint unix:///path/csi.sock -root /tmp/hostpath -node-id node-1
//
// The controller creates and deletes volumes (CREATE_DELETE_VOLUME); it
// does not publish (no PUBLISH_UNPUBLISH_VOLUME). The node stages
// (STAGE_UNSTAGE_VOLUME: the staging path points at the volume) and
// publishes (the target path points at the staging path's volume).
//
// # Concurrency
//
// gRPC serves calls concurrently; a mutex serialises the volume calls,
// which are cheap.
//
// # Invariants
//
//   - Every call is idempotent, as CSI requires: creating an existing
//     volume with compatible capacity returns it; unpublishing or
//     unstaging what is not there succeeds.
//   - Volume ids are the sanitised volume name: the same name always
//     names the same directory.
package main
