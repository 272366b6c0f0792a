// Package httplimittest holds what tests of HTTP limits share: a client
// that sends a body slower than any deadline allows.
package httplimittest

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"testing"
	"time"
)

// Trickle opens a connection to addr, sends head (a request's line and
// headers announcing a body, and the start of the body if any), then one
// byte of filler every interval until the server ends the connection. It
// returns what the connection read once it ended ("" when the server only
// closed it), or "still open at the test deadline" after timeout.
func Trickle(t testing.TB, addr, head string, filler byte, interval, timeout time.Duration) <-chan string {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	fmt.Fprint(c, head)
	out := make(chan string, 1)
	stop := make(chan struct{})
	go func() { // the slow client: one byte per interval until the server ends it
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				if _, err := c.Write([]byte{filler}); err != nil {
					return
				}
			}
		}
	}()
	go func() {
		defer close(stop)
		_ = c.SetReadDeadline(time.Now().Add(timeout))
		b, err := io.ReadAll(bufio.NewReader(c))
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			out <- "still open at the test deadline"
			return
		}
		out <- string(b)
	}()
	return out
}
