package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ordoplane/ordo/client/stats"
	"github.com/ordoplane/ordo/clock"
	"github.com/ordoplane/ordo/commands/httpapi/httplimit"
	"github.com/ordoplane/ordo/logtee"
)

// Config configures the client's HTTP API.
type Config struct {
	// Allocs are the client's allocations. Required.
	Allocs Allocs
	// Clock paces the polling of followed logs; default clock.System.
	Clock clock.Clock
	// PollInterval is how often a followed log is read again for new
	// output; default 250ms.
	PollInterval time.Duration
	// HeartbeatInterval is how long a followed stream of frames stays
	// silent before it sends an empty frame (Nomad's heartbeat, which the
	// nomad/api client skips); default 10s.
	HeartbeatInterval time.Duration
	// Logger; default slog.Default().
	Logger *slog.Logger
	// CSI serves /v1/client/csi/ (client/csi's Handler: the servers'
	// detach and create calls); nil serves none.
	CSI http.Handler
	// Limits bounds the API's connections as the servers' (the agent
	// file's limits block); zero fields take httplimit's defaults.
	// Followed logs roll the write deadline per write.
	Limits httplimit.Config
	// Registerer receives the listener's metrics
	// (ordo_http_conns_refused_total{listener="client"}); nil: none.
	Registerer prometheus.Registerer
	// Stats samples the host and the tasks' processes; default a
	// stats.Sampler of /proc on the Clock.
	Stats *stats.Sampler
	// Collector collects terminal allocations on request
	// (client.Client); nil answers 501 on the gc routes.
	Collector Collector
	// Monitor tees the agent's log to GET /v1/agent/monitor (monitor.go);
	// nil serves no such route.
	Monitor *logtee.Tee
}

// DefaultConfig returns the defaults of the optional fields.
func DefaultConfig() Config {
	return Config{Clock: clock.System{}, PollInterval: 250 * time.Millisecond,
		HeartbeatInterval: 10 * time.Second, Logger: slog.Default()}
}

// Validate reports a Config that cannot work.
func (c Config) Validate() error {
	switch {
	case c.Allocs == nil:
		return errors.New("client/httpapi: Allocs is required")
	case c.PollInterval < 0, c.HeartbeatInterval < 0:
		return errors.New("client/httpapi: intervals must not be negative")
	}
	if err := c.Limits.Validate(); err != nil {
		return fmt.Errorf("client/httpapi: %w", err)
	}
	return nil
}

// Server is the client's HTTP API.
type Server struct {
	cfg Config
	log *slog.Logger
	mux *http.ServeMux
}

// New returns the API of cfg's allocations.
func New(cfg Config) (*Server, error) {
	d := DefaultConfig()
	if cfg.Clock == nil {
		cfg.Clock = d.Clock
	}
	if cfg.PollInterval == 0 {
		cfg.PollInterval = d.PollInterval
	}
	if cfg.HeartbeatInterval == 0 {
		cfg.HeartbeatInterval = d.HeartbeatInterval
	}
	if cfg.Logger == nil {
		cfg.Logger = d.Logger
	}
	if cfg.Stats == nil {
		cfg.Stats = stats.New(stats.Config{Clock: cfg.Clock})
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, log: cfg.Logger, mux: http.NewServeMux()}
	lim := cfg.Limits.WithDefaults()
	s.mux.HandleFunc("GET /v1/client/fs/logs/{alloc_id}", func(w http.ResponseWriter, r *http.Request) {
		s.logs(httplimit.Rolling(w, lim.WriteTimeout), r) // a followed log runs for as long as the reader reads
	})
	s.mux.HandleFunc("GET /v1/client/allocation/{alloc_id}", s.allocStatus) // allocstatus.go
	// routes.go: files, stats, restart, signal, exec, gc.
	s.controlRoutes()
	s.monitorRoute() // monitor.go: the agent's log, as the servers proxy ?node_id to it
	if cfg.CSI != nil {
		s.mux.Handle("/v1/client/csi/", cfg.CSI)
	}
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, &apiError{Status: http.StatusNotFound, Message: "no such endpoint: " + r.Method + " " + r.URL.Path})
	})
	return s, nil
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// Serve answers requests on ln until ctx ends, then ends the streams
// open (their requests' contexts derive from ctx), waits for them and
// returns nil; an error when ln fails first. It closes ln.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	limited, err := s.cfg.Limits.Listen(ln, "client", s.cfg.Registerer) // connections per address
	if err != nil {
		ln.Close()
		return fmt.Errorf("client/httpapi: %w", err)
	}
	defer limited.Unregister()
	ln = limited
	srv := httplimit.NewServer(s, s.cfg.Limits) // header, body, write and idle timeouts
	srv.BaseContext = func(net.Listener) context.Context { return ctx }
	srv.ErrorLog = slog.NewLogLogger(s.log.Handler(), slog.LevelDebug)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("client/httpapi: serve: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		srv.Close()
	}
	<-errc
	return nil
}

// Listen listens on addr (host:port; port 0 picks a free one) and returns
// the listener and the address to advertise: the listener's, with an
// unspecified host (0.0.0.0, ::) replaced by the machine's first
// non-loopback address.
func Listen(addr string) (net.Listener, string, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, "", fmt.Errorf("client/httpapi: listen %s: %w", addr, err)
	}
	tcp, ok := ln.Addr().(*net.TCPAddr)
	if !ok || !tcp.IP.IsUnspecified() {
		return ln, ln.Addr().String(), nil
	}
	host := "127.0.0.1"
	if addrs, err := net.InterfaceAddrs(); err == nil {
		for _, a := range addrs {
			if ipn, ok := a.(*net.IPNet); ok && ipn.IP.IsGlobalUnicast() {
				host = ipn.IP.String()
				break
			}
		}
	}
	return ln, net.JoinHostPort(host, fmt.Sprint(tcp.Port)), nil
}

// apiError is an error answer: a status and the JSON body ordo's server
// API answers ({"Error", "Field", "Reason", "Status"}).
type apiError struct {
	Status  int
	Message string
	// Field names the invalid parameter of a 400.
	Field  string
	Reason string
}

func (e *apiError) Error() string { return e.Message }

// invalid is a 400 naming the parameter.
func invalid(field, format string, args ...any) *apiError {
	reason := fmt.Sprintf(format, args...)
	return &apiError{Status: http.StatusBadRequest, Field: field, Reason: reason,
		Message: fmt.Sprintf("invalid %s: %s", field, reason)}
}

func writeError(w http.ResponseWriter, err error) {
	ae, ok := errors.AsType[*apiError](err)
	if !ok {
		ae = &apiError{Status: http.StatusInternalServerError, Message: err.Error()}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(ae.Status)
	_ = json.NewEncoder(w).Encode(struct {
		Error  string
		Field  string `json:",omitempty"`
		Reason string `json:",omitempty"`
		Status int
	}{ae.Message, ae.Field, ae.Reason, ae.Status})
}
