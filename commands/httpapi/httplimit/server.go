package httplimit

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ordoplane/ordo/commands/httpapi/connlimit"
)

// NewServer returns a server for h bounded as c says (zero fields take
// their defaults): the header, write and idle timeouts are net/http's,
// the body deadline is set by the handler NewServer wraps around h.
func NewServer(h http.Handler, c Config) *http.Server {
	c = c.WithDefaults()
	return &http.Server{
		Handler:           Handler(h, c),
		ReadHeaderTimeout: on(c.ReadTimeout),
		WriteTimeout:      on(c.WriteTimeout),
		// No IdleTimeout would fall back to the header timeout: say it.
		IdleTimeout: idle(c.IdleTimeout),
	}
}

// idle maps "off" to a day: net/http would read 0 as ReadHeaderTimeout.
func idle(d time.Duration) time.Duration {
	if d < 0 {
		return 24 * time.Hour
	}
	return d
}

// Listen wraps ln with the per-address cap, its metrics labelled
// listener=name in reg (nil: none).
func (c Config) Listen(ln net.Listener, name string, reg prometheus.Registerer) (*connlimit.Listener, error) {
	c = c.WithDefaults()
	l, err := connlimit.Wrap(ln, connlimit.Config{MaxPerAddr: max(c.MaxConnsPerClient, 0), Name: name, Registerer: reg})
	if err != nil {
		return nil, fmt.Errorf("httplimit: %w", err)
	}
	return l, nil
}

// Handler sets the body deadline of every request h serves: a request
// with a body must deliver all of it within c.BodyTimeout of its headers
// (the connection's read deadline); once it has, or when it has none,
// the read deadline is lifted, so a long handler is not cancelled by it.
func Handler(h http.Handler, c Config) http.Handler {
	c = c.WithDefaults()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if c.BodyTimeout > 0 && r.Body != nil && r.Body != http.NoBody && r.ContentLength != 0 {
			ctl := http.NewResponseController(w)
			_ = ctl.SetReadDeadline(time.Now().Add(c.BodyTimeout))
			r.Body = &bodyReader{ReadCloser: r.Body, ctl: ctl, timeouts: c.BodyTimeouts}
		}
		h.ServeHTTP(w, r)
	})
}

// bodyReader lifts the connection's read deadline once the body is read,
// and counts a body its deadline cut off.
type bodyReader struct {
	io.ReadCloser
	ctl *http.ResponseController
	// roll, when set, is the deadline given to every read.
	roll time.Duration
	// timeouts, when set, counts a body cut off by its deadline, once.
	timeouts prometheus.Counter
	counted  bool
}

func (b *bodyReader) Read(p []byte) (int, error) {
	if b.roll > 0 {
		_ = b.ctl.SetReadDeadline(time.Now().Add(b.roll))
	}
	n, err := b.ReadCloser.Read(p)
	switch {
	case err == io.EOF:
		_ = b.ctl.SetReadDeadline(time.Time{})
	case err != nil && b.timeouts != nil && !b.counted && errors.Is(err, os.ErrDeadlineExceeded):
		b.counted = true
		b.timeouts.Inc()
	}
	return n, err
}

// RollingBody gives every read of r's body d from when it starts instead
// of one deadline for the whole body: for uploads (a snapshot restore)
// that may take longer than the body deadline while data keeps arriving.
// d <= 0 leaves r as it is.
func RollingBody(w http.ResponseWriter, r *http.Request, d time.Duration) {
	if d <= 0 || r.Body == nil || r.Body == http.NoBody {
		return
	}
	if b, ok := r.Body.(*bodyReader); ok {
		b.roll = d
		return
	}
	r.Body = &bodyReader{ReadCloser: r.Body, ctl: http.NewResponseController(w), roll: d}
}

// ExtendWrite moves w's write deadline to d from now (d <= 0: no
// deadline), for an answer that waits before it writes: a blocking query
// extends it by its wait.
func ExtendWrite(w http.ResponseWriter, d time.Duration) {
	var deadline time.Time
	if d > 0 {
		deadline = time.Now().Add(d)
	}
	_ = http.NewResponseController(w).SetWriteDeadline(deadline)
}

// Rolling returns w with a write deadline d from the start of every write
// and flush, for streams (events, logs, snapshots) that may run for hours
// but must not stall: a reader that stops reading is cut off after d.
// d <= 0 lifts the deadline instead.
func Rolling(w http.ResponseWriter, d time.Duration) http.ResponseWriter {
	ctl := http.NewResponseController(w)
	if d <= 0 {
		_ = ctl.SetWriteDeadline(time.Time{})
		return w
	}
	return &rollingWriter{ResponseWriter: w, ctl: ctl, d: d}
}

// rollingWriter extends the write deadline before every write and flush.
type rollingWriter struct {
	http.ResponseWriter
	ctl *http.ResponseController
	d   time.Duration
}

func (w *rollingWriter) Write(p []byte) (int, error) {
	_ = w.ctl.SetWriteDeadline(time.Now().Add(w.d))
	return w.ResponseWriter.Write(p)
}

// Flush implements http.Flusher.
func (w *rollingWriter) Flush() { _ = w.FlushError() }

// FlushError is the flush ResponseController calls.
func (w *rollingWriter) FlushError() error {
	_ = w.ctl.SetWriteDeadline(time.Now().Add(w.d))
	return w.ctl.Flush()
}

// Unwrap lets ResponseController reach the connection.
func (w *rollingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
