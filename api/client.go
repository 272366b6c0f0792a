package api

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

// maxDrain bounds what is read past a decoded answer so that its
// connection goes back to the pool.
const maxDrain = 4 << 10

// Client calls ordo's HTTP API on one or more servers. Build it with New.
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
	token          string
	namespace      string
	region         string
	userAgent      string
	header         http.Header
	params         url.Values
}

// Option configures a Client.
type Option func(*options)

// WithHTTPClient sets the HTTP client; default a new http.Client with no
// overall timeout (calls carry their context).
func WithHTTPClient(c *http.Client) Option { return func(o *options) { o.http = c } }

// WithRequestTimeout bounds each attempt of a call that is not a blocking
// query; default 0, no bound beyond the call's context.
func WithRequestTimeout(d time.Duration) Option { return func(o *options) { o.requestTimeout = d } }

// WithLogger sets the logger of failed attempts; default slog.Default().
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.log = l } }

// WithToken sends token as X-Nomad-Token with every request.
func WithToken(token string) Option { return func(o *options) { o.token = token } }

// WithNamespace sets the namespace of requests whose query names none.
func WithNamespace(ns string) Option { return func(o *options) { o.namespace = ns } }

// WithRegion sets the region of requests whose query names none.
func WithRegion(region string) Option { return func(o *options) { o.region = region } }

// WithUserAgent sets the User-Agent header; default "ordo-api".
func WithUserAgent(ua string) Option { return func(o *options) { o.userAgent = ua } }

// WithHeader adds a header sent with every request (such as the cluster
// secret of membership changes).
func WithHeader(key, value string) Option {
	return func(o *options) {
		if o.header == nil {
			o.header = http.Header{}
		}
		o.header.Set(key, value)
	}
}

// WithParams adds query parameters to every request, such as at_index to
// read a past state. A request's own parameters of the same name win.
func WithParams(params url.Values) Option {
	return func(o *options) {
		if o.params == nil {
			o.params = url.Values{}
		}
		for k, vs := range params {
			o.params[k] = append(o.params[k], vs...)
		}
	}
}

// New returns a client of the servers at addrs: host:port or URLs
// (http or https, with an optional path prefix).
func New(addrs []string, opts ...Option) (*Client, error) {
	if len(addrs) == 0 {
		return nil, errors.New("api: no server addresses")
	}
	c := &Client{opts: options{http: &http.Client{}, log: slog.Default(), userAgent: "ordo-api"}}
	for _, o := range opts {
		o(&c.opts)
	}
	if c.opts.requestTimeout < 0 {
		return nil, errors.New("api: request timeout must not be negative")
	}
	for _, a := range addrs {
		base, err := BaseURL(a)
		if err != nil {
			return nil, err
		}
		c.servers = append(c.servers, base)
	}
	return c, nil
}

// BaseURL normalises a server address, host:port or a URL, to
// scheme://host[:port][/prefix] with no trailing slash.
func BaseURL(addr string) (string, error) {
	if !strings.Contains(addr, "://") {
		addr = "http://" + addr
	}
	u, err := url.Parse(addr)
	if err != nil {
		return "", fmt.Errorf("invalid address %q: %w", addr, err)
	}
	if u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return "", fmt.Errorf("invalid address %q: want host:port or http(s)://host:port", addr)
	}
	return strings.TrimSuffix(u.String(), "/"), nil
}

// Servers returns the servers' base URLs.
func (c *Client) Servers() []string { return append([]string(nil), c.servers...) }

// Get decodes the JSON answer of GET path?params into out.
func (c *Client) Get(ctx context.Context, path string, params url.Values, out any) error {
	_, err := c.Do(ctx, &Request{Method: http.MethodGet, Path: path, Params: params}, out)
	return err
}

// Put sends in as JSON (an io.Reader as it is) to path and decodes the
// answer into out, when out is not nil.
func (c *Client) Put(ctx context.Context, path string, in, out any) error {
	_, err := c.Do(ctx, &Request{Method: http.MethodPut, Path: path, Body: in}, out)
	return err
}

// Delete sends DELETE path and decodes the answer into out, when out is
// not nil.
func (c *Client) Delete(ctx context.Context, path string, out any) error {
	_, err := c.Do(ctx, &Request{Method: http.MethodDelete, Path: path}, out)
	return err
}

// Query is a GET of path that may block: with q.Index set the server
// answers once the state has moved past it, or after q.Wait. It returns
// the answer's index, to pass as the next q.Index.
func (c *Client) Query(ctx context.Context, path string, q *QueryOptions, out any) (QueryMeta, error) {
	return c.Do(ctx, &Request{Method: http.MethodGet, Path: path, Query: q}, out)
}

// Call sends a method request to path?params with in as its body (see
// Put) and decodes the answer into out, when out is not nil.
func (c *Client) Call(ctx context.Context, method, path string, params url.Values, in, out any) error {
	_, err := c.Do(ctx, &Request{Method: method, Path: path, Params: params, Body: in}, out)
	return err
}

// Stream sends GET path?params and returns the body of a successful
// answer for the caller to read and close (event streams, logs, files).
func (c *Client) Stream(ctx context.Context, path string, params url.Values) (io.ReadCloser, error) {
	body, _, err := c.Open(ctx, &Request{Method: http.MethodGet, Path: path, Params: params})
	return body, err
}

// Open sends req and returns the body of a successful answer unread, for
// the caller to read and close, with what its headers say.
func (c *Client) Open(ctx context.Context, req *Request) (io.ReadCloser, QueryMeta, error) {
	var body io.ReadCloser
	r := *req
	r.stream = &body
	meta, err := c.Do(ctx, &r, nil)
	if err != nil {
		return nil, QueryMeta{}, err
	}
	return body, meta, nil
}

// Do sends req to the servers in turn, starting with the one that
// answered last, and decodes a 2xx answer into out (when not nil). A
// server that cannot be reached or answers 5xx passes the call to the
// next; when none answers, the error wraps ErrNoServers and each
// server's error. A 4xx answer is returned at once as an *Error.
func (c *Client) Do(ctx context.Context, req *Request, out any) (QueryMeta, error) {
	body, contentType, err := encodeBody(req.Body)
	if err != nil {
		return QueryMeta{}, fmt.Errorf("encode %s %s: %w", req.Method, req.Path, err)
	}
	if _, ok := req.Body.(io.Reader); ok && len(c.servers) > 1 {
		// A reader is read once: buffer it so another server can be tried.
		b, err := io.ReadAll(req.Body.(io.Reader))
		if err != nil {
			return QueryMeta{}, fmt.Errorf("read body of %s %s: %w", req.Method, req.Path, err)
		}
		body = func() io.Reader { return bytes.NewReader(b) }
	}
	c.mu.Lock()
	first := c.mu.next
	c.mu.Unlock()
	var errs []error
	for i := range c.servers {
		n := (first + i) % len(c.servers)
		meta, retry, err := c.attempt(ctx, c.servers[n], req, body, contentType, out)
		if err == nil {
			c.mu.Lock()
			c.mu.next = n
			c.mu.Unlock()
			return meta, nil
		}
		if !retry || ctx.Err() != nil {
			return QueryMeta{}, err
		}
		c.opts.log.Debug("server did not answer", "server", c.servers[n], "method", req.Method, "path", req.Path, "err", err)
		errs = append(errs, err)
	}
	return QueryMeta{}, fmt.Errorf("%w: %w", ErrNoServers, errors.Join(errs...))
}

// encodeBody returns a function giving a fresh reader of in for each
// attempt and its content type: JSON, or an io.Reader sent as it is.
func encodeBody(in any) (func() io.Reader, string, error) {
	switch v := in.(type) {
	case nil:
		return nil, "", nil
	case io.Reader:
		return func() io.Reader { return v }, "application/octet-stream", nil
	}
	b, err := json.Marshal(in)
	if err != nil {
		return nil, "", err
	}
	return func() io.Reader { return bytes.NewReader(b) }, "application/json", nil
}

// attempt sends req to one server; retry says whether another server may
// do better.
func (c *Client) attempt(ctx context.Context, base string, req *Request, body func() io.Reader, contentType string, out any) (meta QueryMeta, retry bool, err error) {
	timeout := c.opts.requestTimeout
	if req.Query != nil && req.Query.Index > 0 {
		timeout = req.Query.timeout()
	}
	if req.Timeout > 0 {
		timeout = req.Timeout
	}
	if timeout > 0 && req.stream == nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	target := base + req.Path
	if q := c.query(req); len(q) > 0 {
		target += "?" + q.Encode()
	}
	var rd io.Reader
	if body != nil {
		rd = body()
	}
	hr, err := http.NewRequestWithContext(ctx, req.Method, target, rd)
	if err != nil {
		return meta, false, fmt.Errorf("build %s %s: %w", req.Method, req.Path, err)
	}
	hr.Header.Set("User-Agent", c.opts.userAgent)
	hr.Header.Set("Accept", "application/json")
	if c.opts.token != "" {
		hr.Header.Set("X-Nomad-Token", c.opts.token)
	}
	if req.Token != "" {
		hr.Header.Set("X-Nomad-Token", req.Token)
	}
	for k, vs := range c.opts.header {
		hr.Header[k] = vs
	}
	if body != nil {
		hr.Header.Set("Content-Type", contentType)
	}
	resp, err := c.opts.http.Do(hr)
	if err != nil {
		return meta, true, err // *url.Error already names the method and URL
	}
	if resp.StatusCode/100 != 2 {
		defer resp.Body.Close()
		e := decodeError(req.Method, req.Path, resp)
		return meta, resp.StatusCode >= 500, e
	}
	meta.NextToken = resp.Header.Get("X-Nomad-NextToken")
	meta.Header = resp.Header
	if v := resp.Header.Get("X-Nomad-Index"); v != "" {
		if meta.LastIndex, err = strconv.ParseUint(v, 10, 64); err != nil {
			resp.Body.Close()
			return meta, true, fmt.Errorf("%w: %s %s: X-Nomad-Index %q: %w", ErrDecode, req.Method, req.Path, v, err)
		}
	}
	if req.stream != nil {
		*req.stream = resp.Body
		return meta, false, nil
	}
	defer resp.Body.Close()
	if out == nil {
		_, err = io.Copy(io.Discard, resp.Body)
		return meta, false, err
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return meta, true, fmt.Errorf("%w: %s %s: %w", ErrDecode, req.Method, req.Path, err)
	}
	// Read the rest (the encoder's newline) so the connection is reused.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxDrain))
	return meta, false, nil
}

// query returns the request's query: its parameters, its query options,
// then the client's namespace, region and parameters where the request
// sets none of the same name.
func (c *Client) query(req *Request) url.Values {
	q := url.Values{}
	for k, vs := range req.Params {
		q[k] = append([]string(nil), vs...)
	}
	if req.Query != nil {
		req.Query.apply(q)
	}
	if c.opts.namespace != "" && !q.Has("namespace") {
		q.Set("namespace", c.opts.namespace)
	}
	if c.opts.region != "" && !q.Has("region") {
		q.Set("region", c.opts.region)
	}
	for k, vs := range c.opts.params {
		if !q.Has(k) {
			q[k] = vs
		}
	}
	return q
}

// Pathf builds an API path from format, escaping each argument as one
// path segment.
func Pathf(format string, segments ...string) string {
	args := make([]any, len(segments))
	for i, s := range segments {
		args[i] = url.PathEscape(s)
	}
	return fmt.Sprintf(format, args...)
}
