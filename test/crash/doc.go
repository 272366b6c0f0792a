// Package crash holds the crash-consistency test: a dev server in a child
// process is killed with SIGKILL under write load and restarted on the same
// data directory, and every acknowledged write must have survived exactly
// once with projections equal to a rebuild from the archive.
package crash
