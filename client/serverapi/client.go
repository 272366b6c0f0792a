package serverapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// maxErrorBody bounds how much of an error answer is read.
const maxErrorBody = 64 << 10

// Client talks to the servers' client API. Build it with New.
type Client struct {
	servers []string
	opts    options

	mu struct {
		sync.Mutex
		// next is the server to try first: the last one that answered.
		next int
	}
}

type options struct {
	http           *http.Client
	requestTimeout time.Duration
	log            *slog.Logger
}

// Option configures a Client.
type Option func(*options)

// WithHTTPClient sets the HTTP client; default a new http.Client with no
// overall timeout (calls carry their own).
func WithHTTPClient(c *http.Client) Option { return func(o *options) { o.http = c } }

// WithRequestTimeout bounds each request that is not a blocking query;
// default 10s.
func WithRequestTimeout(d time.Duration) Option { return func(o *options) { o.requestTimeout = d } }

// WithLogger sets the logger of failed attempts; default slog.Default().
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.log = l } }

// New returns a client of the servers at addrs: host:port or URLs.
func New(addrs []string, opts ...Option) (*Client, error) {
	if len(addrs) == 0 {
		return nil, errors.New("serverapi: no server addresses")
	}
	c := &Client{opts: options{http: &http.Client{}, requestTimeout: 10 * time.Second, log: slog.Default()}}
	for _, o := range opts {
		o(&c.opts)
	}
	if c.opts.requestTimeout <= 0 {
		return nil, errors.New("serverapi: request timeout must be positive")
	}
	for _, a := range addrs {
		base, err := baseURL(a)
		if err != nil {
			return nil, err
		}
		c.servers = append(c.servers, base)
	}
	return c, nil
}

// baseURL normalises a server address to scheme://host[:port][/prefix].
func baseURL(addr string) (string, error) {
	if !strings.Contains(addr, "://") {
		addr = "http://" + addr
	}
	u, err := url.Parse(addr)
	if err != nil {
		return "", fmt.Errorf("serverapi: server address %q: %w", addr, err)
	}
	if u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return "", fmt.Errorf("serverapi: server address %q: want host:port or http(s)://host:port", addr)
	}
	return strings.TrimSuffix(u.String(), "/"), nil
}

// Servers returns the servers' base URLs.
func (c *Client) Servers() []string { return append([]string(nil), c.servers...) }

// request is one call.
type request struct {
	method, path string
	query        url.Values
	body         any
	// timeout bounds each attempt; 0 is the client's request timeout.
	timeout time.Duration
}

// do runs req against the servers in turn and decodes a 2xx answer into
// out (when not nil); it returns the answer's X-Nomad-Index.
func (c *Client) do(ctx context.Context, req request, out any) (uint64, error) {
	var body []byte
	if req.body != nil {
		var err error
		if body, err = json.Marshal(req.body); err != nil {
			return 0, fmt.Errorf("serverapi: encode %s %s: %w", req.method, req.path, err)
		}
	}
	c.mu.Lock()
	first := c.mu.next
	c.mu.Unlock()
	var errs []error
	for i := range c.servers {
		n := (first + i) % len(c.servers)
		index, retry, err := c.attempt(ctx, c.servers[n], req, body, out)
		if err == nil {
			c.mu.Lock()
			c.mu.next = n
			c.mu.Unlock()
			return index, nil
		}
		if !retry || ctx.Err() != nil {
			return 0, err
		}
		c.opts.log.Debug("server did not answer", "server", c.servers[n], "method", req.method, "path", req.path, "err", err)
		errs = append(errs, err)
	}
	return 0, fmt.Errorf("%w: %w", ErrNoServers, errors.Join(errs...))
}

// attempt sends req to one server; retry says whether another server may
// do better.
func (c *Client) attempt(ctx context.Context, base string, req request, body []byte, out any) (index uint64, retry bool, err error) {
	timeout := req.timeout
	if timeout <= 0 {
		timeout = c.opts.requestTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	u := base + req.path
	if len(req.query) > 0 {
		u += "?" + req.query.Encode()
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	hr, err := http.NewRequestWithContext(ctx, req.method, u, rd)
	if err != nil {
		return 0, false, fmt.Errorf("serverapi: %s %s: %w", req.method, req.path, err)
	}
	if body != nil {
		hr.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.opts.http.Do(hr)
	if err != nil {
		return 0, true, fmt.Errorf("%s %s%s: %w", req.method, base, req.path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		he := &HTTPError{Method: req.method, Path: req.path, Status: resp.StatusCode}
		var eb struct{ Error, Field, Reason string }
		if json.Unmarshal(b, &eb) == nil && eb.Error != "" {
			he.Message, he.Field, he.Reason = eb.Error, eb.Field, eb.Reason
		} else {
			he.Message = strings.TrimSpace(string(b))
		}
		if resp.StatusCode >= 500 {
			return 0, true, fmt.Errorf("%s: %w", base, he)
		}
		return 0, false, he
	}
	if v := resp.Header.Get("X-Nomad-Index"); v != "" {
		if index, err = strconv.ParseUint(v, 10, 64); err != nil {
			return 0, true, fmt.Errorf("serverapi: %s %s: X-Nomad-Index %q: %w", req.method, req.path, v, err)
		}
	}
	if out != nil {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			return 0, true, fmt.Errorf("serverapi: decode %s %s: %w", req.method, req.path, err)
		}
	}
	return index, false, nil
}
