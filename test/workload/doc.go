// Package workload holds the end-to-end test of a real Nomad service on a
// dev agent's client: a task serving HTTP on its dynamic port, found
// through Nomad-native service discovery, judged healthy by its check, and
// read by another job's templates, which re-render when the service's
// instances or a variable change.
package workload
