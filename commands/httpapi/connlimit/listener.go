package connlimit

import (
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Refusal429 is the default answer to a refused connection: Nomad's.
const Refusal429 = "HTTP/1.1 429 Too Many Requests\r\nContent-Type: text/plain\r\nContent-Length: 80\r\nConnection: close\r\n\r\n" +
	"Your IP is issuing too many concurrent connections, please rate limit your calls\n"

// Config configures a Listener.
type Config struct {
	// MaxPerAddr is how many connections one remote IP may hold open at
	// once; 0 sets no cap.
	MaxPerAddr int
	// Refusal is written to a refused connection before it is closed;
	// default Refusal429. Writing it may take at most RefusalTimeout.
	Refusal string
	// RefusalTimeout bounds the write of Refusal; default 100ms. The
	// write is into a new socket's empty send buffer, so it does not wait
	// on the peer.
	RefusalTimeout time.Duration
	// Name labels the listener's metrics (listener="api"); required when
	// Registerer is set.
	Name string
	// Registerer receives ordo_http_conns_refused_total and
	// ordo_http_conns_open; nil registers nothing.
	Registerer prometheus.Registerer
}

// Validate reports a Config that cannot work.
func (c Config) Validate() error {
	switch {
	case c.MaxPerAddr < 0:
		return fmt.Errorf("connlimit: MaxPerAddr %d must not be negative", c.MaxPerAddr)
	case c.RefusalTimeout < 0:
		return fmt.Errorf("connlimit: RefusalTimeout %v must not be negative", c.RefusalTimeout)
	case c.Registerer != nil && c.Name == "":
		return errors.New("connlimit: Name is required with a Registerer")
	}
	return nil
}

// Listener is a net.Listener that refuses connections past a per-address
// cap.
type Listener struct {
	net.Listener
	cfg     Config
	refused prometheus.Counter
	open    prometheus.Gauge
	// exempt, when set, names addresses the cap does not apply to.
	exempt atomic.Pointer[func(ip string) bool]

	mu struct {
		sync.Mutex
		conns map[string]int // remote IP → open connections
	}
}

var _ net.Listener = (*Listener)(nil)

// Wrap returns ln limited as cfg says; closing the Listener closes ln. Its
// metrics are unregistered by Unregister.
func Wrap(ln net.Listener, cfg Config) (*Listener, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Refusal == "" {
		cfg.Refusal = Refusal429
	}
	if cfg.RefusalTimeout == 0 {
		cfg.RefusalTimeout = 100 * time.Millisecond
	}
	labels := prometheus.Labels{"listener": cfg.Name}
	l := &Listener{Listener: ln, cfg: cfg,
		refused: prometheus.NewCounter(prometheus.CounterOpts{Name: "ordo_http_conns_refused_total",
			Help: "Connections refused because their address held the most connections allowed.", ConstLabels: labels}),
		open: prometheus.NewGauge(prometheus.GaugeOpts{Name: "ordo_http_conns_open",
			Help: "Connections open through the listener.", ConstLabels: labels}),
	}
	l.mu.conns = map[string]int{}
	if cfg.Registerer != nil {
		if err := cfg.Registerer.Register(l.refused); err != nil {
			return nil, fmt.Errorf("connlimit: register metrics of %q: %w", cfg.Name, err)
		}
		if err := cfg.Registerer.Register(l.open); err != nil {
			cfg.Registerer.Unregister(l.refused)
			return nil, fmt.Errorf("connlimit: register metrics of %q: %w", cfg.Name, err)
		}
	}
	return l, nil
}

// Unregister removes the listener's metrics from its Registerer.
func (l *Listener) Unregister() {
	if r := l.cfg.Registerer; r != nil {
		r.Unregister(l.refused)
		r.Unregister(l.open)
	}
}

// Accept returns the next connection whose address is under the cap,
// refusing the others on the way.
func (l *Listener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		addr := hostOf(c.RemoteAddr())
		if l.admit(addr, l.isExempt(addr)) {
			l.open.Inc()
			return &conn{Conn: c, release: func() { l.release(addr) }}, nil
		}
		l.refused.Inc()
		_ = c.SetWriteDeadline(time.Now().Add(l.cfg.RefusalTimeout))
		_, _ = c.Write([]byte(l.cfg.Refusal))
		_ = c.Close()
	}
}

// SetDeadline sets the deadline of Accept when the wrapped listener has
// one (a *net.TCPListener does), so a caller can wake a blocked Accept.
func (l *Listener) SetDeadline(t time.Time) error {
	if d, ok := l.Listener.(interface{ SetDeadline(time.Time) error }); ok {
		return d.SetDeadline(t)
	}
	return nil
}

// Open returns how many connections addr (an IP) holds open.
func (l *Listener) Open(addr string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.mu.conns[addr]
}

// SetExempt makes the cap skip the addresses exempt reports (the other
// servers of a cluster, whose forwarded requests each take a connection);
// nil exempts none. exempt is called on Accept's goroutine and must be
// quick.
func (l *Listener) SetExempt(exempt func(ip string) bool) {
	if exempt == nil {
		l.exempt.Store(nil)
		return
	}
	l.exempt.Store(&exempt)
}

func (l *Listener) isExempt(addr string) bool {
	f := l.exempt.Load()
	return f != nil && (*f)(addr)
}

func (l *Listener) admit(addr string, exempt bool) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !exempt && l.cfg.MaxPerAddr > 0 && l.mu.conns[addr] >= l.cfg.MaxPerAddr {
		return false
	}
	l.mu.conns[addr]++
	return true
}

func (l *Listener) release(addr string) {
	l.open.Dec()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.mu.conns[addr]--; l.mu.conns[addr] <= 0 {
		delete(l.mu.conns, addr)
	}
}

// hostOf is the IP of a remote address, the whole address when it has no
// port (a unix socket's peer).
func hostOf(a net.Addr) string {
	if a == nil {
		return ""
	}
	if tcp, ok := a.(*net.TCPAddr); ok {
		return tcp.IP.String()
	}
	host, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String()
	}
	return host
}

// conn releases its address's count on its first Close.
type conn struct {
	net.Conn
	once    sync.Once
	release func()
}

// CloseWrite passes through, so net/http can half-close a connection to
// let its last answer reach the peer.
func (c *conn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// ReadFrom passes through, keeping sendfile and splice.
func (c *conn) ReadFrom(r io.Reader) (int64, error) { return io.Copy(c.Conn, r) }

func (c *conn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
