// Package mirror holds the Kafka mirror's end-to-end tests: real agents
// (one, or a three-server cluster over loopback TCP) mirroring to an
// in-process Kafka (kfake) over TCP, with faults injected into the broker
// and leaders failed over.
package mirror
