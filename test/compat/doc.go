// Package compat holds compatibility tests that drive ordo with the
// github.com/hashicorp/nomad/api Go client, so that Nomad users' code works
// against the endpoints ordo has.
package compat
