package nettest

import (
	"net"
	"testing"
)

// ClosedAddr returns a loopback address nothing listens on: it listens on
// a free port and closes it at once.
func ClosedAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}
