package connlimit_test

import (
	"bufio"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ordoplane/ordo/commands/httpapi/connlimit"
)

const testTimeout = 10 * time.Second

// serve accepts on l until it closes, handing every accepted connection to
// the returned channel.
func serve(t *testing.T, l net.Listener) <-chan net.Conn {
	t.Helper()
	accepted := make(chan net.Conn, 16)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	t.Cleanup(func() {
		l.Close()
		<-done
	})
	return accepted
}

func receive(t *testing.T, ch <-chan net.Conn) net.Conn {
	t.Helper()
	select {
	case c := <-ch:
		t.Cleanup(func() { c.Close() })
		return c
	case <-time.After(testTimeout):
		t.Fatal("no connection accepted")
		return nil
	}
}

func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// refused reports whether c was answered with the refusal or closed: it
// reads until the peer closes.
func refused(t *testing.T, c net.Conn) bool {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(testTimeout))
	b, err := io.ReadAll(bufio.NewReader(c))
	if err != nil && !strings.Contains(err.Error(), "reset") {
		t.Fatalf("read: %v", err)
	}
	return len(b) == 0 || strings.HasPrefix(string(b), "HTTP/1.1 429")
}

// TestPerAddressCap: past the cap, a connection from the same address is
// refused (429 and closed) and counted; closing one admits the next.
func TestPerAddressCap(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	l, err := connlimit.Wrap(inner, connlimit.Config{MaxPerAddr: 2, Name: "test", Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	accepted := serve(t, l)
	addr := inner.Addr().String()

	dial(t, addr)
	first := receive(t, accepted)
	dial(t, addr)
	receive(t, accepted)
	if n := l.Open("127.0.0.1"); n != 2 {
		t.Fatalf("open from 127.0.0.1 = %d, want 2", n)
	}
	third := dial(t, addr)
	if !refused(t, third) {
		t.Fatal("a third connection from one address was not refused")
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var refusedCount float64
	for _, mf := range mfs {
		if mf.GetName() == "ordo_http_conns_refused_total" {
			refusedCount = mf.GetMetric()[0].GetCounter().GetValue()
		}
	}
	if refusedCount != 1 {
		t.Fatalf("ordo_http_conns_refused_total = %v, want 1", refusedCount)
	}

	// A closed connection frees its place.
	first.Close()
	if n := l.Open("127.0.0.1"); n != 1 {
		t.Fatalf("open after a close = %d, want 1", n)
	}
	c := dial(t, addr)
	got := receive(t, accepted)
	if _, err := c.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 1)
	_ = got.SetReadDeadline(time.Now().Add(testTimeout))
	if _, err := io.ReadFull(got, buf); err != nil || buf[0] != 'x' {
		t.Fatalf("admitted connection does not carry data: %q %v", buf, err)
	}
}

// TestNoCap: MaxPerAddr 0 admits every connection.
func TestNoCap(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l, err := connlimit.Wrap(inner, connlimit.Config{})
	if err != nil {
		t.Fatal(err)
	}
	accepted := serve(t, l)
	for range 5 {
		dial(t, inner.Addr().String())
		receive(t, accepted)
	}
	if n := l.Open("127.0.0.1"); n != 5 {
		t.Fatalf("open = %d, want 5", n)
	}
}

func TestConfigValidate(t *testing.T) {
	for _, c := range []connlimit.Config{
		{MaxPerAddr: -1},
		{RefusalTimeout: -time.Second},
		{Registerer: prometheus.NewRegistry()},
	} {
		if c.Validate() == nil {
			t.Errorf("%+v: no error", c)
		}
	}
}

// TestExempt: an exempt address is admitted past the cap.
func TestExempt(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l, err := connlimit.Wrap(inner, connlimit.Config{MaxPerAddr: 1})
	if err != nil {
		t.Fatal(err)
	}
	l.SetExempt(func(ip string) bool { return ip == "127.0.0.1" })
	accepted := serve(t, l)
	for range 3 {
		dial(t, inner.Addr().String())
		receive(t, accepted)
	}
	if n := l.Open("127.0.0.1"); n != 3 {
		t.Fatalf("open = %d, want 3", n)
	}
}
