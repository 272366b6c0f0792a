// Package capacity tests capacity on demand end to end: a real server
// agent with the launcher's local driver and the capacity processor, a
// job too big for its node pool, real `ordo agent -client` processes
// launched as instances, registering as nodes and running the job's
// allocations, then returned once idle (docs/capacity.md).
package capacity
