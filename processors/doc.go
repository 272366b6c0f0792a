// Package processors holds the goroutines that consume the applied log and
// act through commands like any client: the supervisor that runs
// leader-only processors, and the processors themselves in sub-packages.
package processors
