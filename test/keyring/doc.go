// Package keyring holds the root keyring's end-to-end tests on a real
// loopback cluster: replication to every server and to one that joins
// later (N5), removal everywhere, and key material never in the log, the
// state store or the event stream (N14).
package keyring
