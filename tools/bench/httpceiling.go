package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

// httpCeilingRows runs the write load (the same clients, requests and HTTP
// stack as loadRows) against a server whose handler reads the body and
// answers {} without doing anything: what HTTP alone allows on this
// machine, the ceiling of the acked-writes figures.
func httpCeilingRows(clients int, d time.Duration) ([]row, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Nomad-Index", "1")
		_, _ = w.Write([]byte("{}"))
	})}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	r := load([]string{ln.Addr().String()}, clients, d)
	if r.acked == 0 {
		return nil, fmt.Errorf("http ceiling: no request answered (%d failed)", r.failed)
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	return []row{
		{fmt.Sprintf("HTTP alone: the write load against a handler that does nothing, %d clients", clients), float64(r.acked) / r.elapsed.Seconds(), "requests/s"},
		{"HTTP alone: request p99", ms(percentile(r.latencies, 0.99)), "ms"},
		{"HTTP alone: CPU per request (client and server in one process)", float64(r.cpu.Microseconds()) / float64(r.acked), "µs"},
	}, nil
}
