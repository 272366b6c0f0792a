// Package examples runs the shipped jobspecs of docs/examples on a dev
// agent's client, with real processes, and checks each reaches the state
// it is meant to: running, or complete with exit code 0. Files that are
// not jobs, or need what a dev agent has not, are listed with the reason.
package examples
