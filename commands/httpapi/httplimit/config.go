package httplimit

import (
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Config bounds an HTTP server's connections. A zero field takes its
// default; a negative duration turns that bound off.
type Config struct {
	// ReadTimeout bounds reading a request's line and headers, from the
	// first byte (http.Server.ReadHeaderTimeout); default 10s.
	ReadTimeout time.Duration `json:"ReadTimeout"`
	// BodyTimeout bounds reading a request's whole body, from the end of
	// its headers; default 30s. Snapshot restores roll it per read.
	BodyTimeout time.Duration `json:"BodyTimeout"`
	// WriteTimeout bounds writing an answer, from the end of the request's
	// headers (http.Server.WriteTimeout); default 60s. Blocking queries
	// extend it by their wait, streams roll it per write.
	WriteTimeout time.Duration `json:"WriteTimeout"`
	// IdleTimeout is how long a kept-alive connection may wait for its
	// next request; default 90s.
	IdleTimeout time.Duration `json:"IdleTimeout"`
	// MaxConnsPerClient caps the connections one remote IP may hold open
	// at once, as Nomad's http_max_conns_per_client; default 100, negative
	// for no cap. Connections past it are answered 429 and closed.
	MaxConnsPerClient int `json:"MaxConnsPerClient"`
	// BodyTimeouts, when set, counts the requests whose body deadline cut
	// them off (the agent registers it as ordo_http_body_timeouts_total).
	BodyTimeouts prometheus.Counter `json:"-"`
}

// Defaults of Config.
const (
	DefaultReadTimeout       = 10 * time.Second
	DefaultBodyTimeout       = 30 * time.Second
	DefaultWriteTimeout      = 60 * time.Second
	DefaultIdleTimeout       = 90 * time.Second
	DefaultMaxConnsPerClient = 100
)

// DefaultConfig returns the defaults.
func DefaultConfig() Config {
	return Config{ReadTimeout: DefaultReadTimeout, BodyTimeout: DefaultBodyTimeout, WriteTimeout: DefaultWriteTimeout,
		IdleTimeout: DefaultIdleTimeout, MaxConnsPerClient: DefaultMaxConnsPerClient}
}

// WithDefaults returns c with every zero field set to its default.
func (c Config) WithDefaults() Config {
	d := DefaultConfig()
	for _, f := range []struct{ dst, def *time.Duration }{
		{&c.ReadTimeout, &d.ReadTimeout}, {&c.BodyTimeout, &d.BodyTimeout},
		{&c.WriteTimeout, &d.WriteTimeout}, {&c.IdleTimeout, &d.IdleTimeout},
	} {
		if *f.dst == 0 {
			*f.dst = *f.def
		}
	}
	if c.MaxConnsPerClient == 0 {
		c.MaxConnsPerClient = d.MaxConnsPerClient
	}
	return c
}

// Validate reports a Config that cannot work: a bound below a millisecond
// that is not off.
func (c Config) Validate() error {
	for _, f := range []struct {
		name string
		v    time.Duration
	}{
		{"ReadTimeout", c.ReadTimeout}, {"BodyTimeout", c.BodyTimeout},
		{"WriteTimeout", c.WriteTimeout}, {"IdleTimeout", c.IdleTimeout},
	} {
		if f.v > 0 && f.v < time.Millisecond {
			return fmt.Errorf("httplimit: %s %v is under a millisecond; negative turns it off", f.name, f.v)
		}
	}
	return nil
}

// on returns d when it bounds anything, 0 (net/http's "none") otherwise.
func on(d time.Duration) time.Duration { return max(d, 0) }
