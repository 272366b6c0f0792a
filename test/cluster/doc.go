// Package cluster holds end-to-end tests of a three-server cluster: real
// agents with Pebble on disk, raft over TCP and the HTTP API on 127.0.0.1,
// driven through the API while the leader fails and comes back.
package cluster
