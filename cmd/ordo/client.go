package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/ordoplane/ordo/cmd/agent"
	"github.com/ordoplane/ordo/commands/httpapi"
)

// maxErrorBody bounds how much of an error response is read.
const maxErrorBody = 64 << 10

// client is a small client of ordo's HTTP API.
type client struct {
	base string // scheme://host[:port][/prefix], no trailing slash
	http *http.Client
	// at is added to every request's query: at_index or at_time, from the
	// -at-index and -at-time flags (attime.go), so reads see a past state.
	at url.Values
	// token is sent as X-Nomad-Token when set.
	token string
	// secret is the cluster secret, sent as X-Ordo-Cluster-Secret when set
	// (operator_raft.go).
	secret string
}

// newClient returns a client for address, a URL or a bare host:port.
func newClient(address string) (*client, error) {
	if !strings.Contains(address, "://") {
		address = "http://" + address
	}
	u, err := url.Parse(address)
	if err != nil {
		return nil, fmt.Errorf("invalid -address %q: %w", address, err)
	}
	if u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, fmt.Errorf("invalid -address %q: want http://host:port", address)
	}
	// No overall timeout: the event stream is long-lived, and every call
	// carries the command's context.
	return &client{base: strings.TrimSuffix(u.String(), "/"), http: &http.Client{}}, nil
}

// apiError is an error answer from the server: its JSON error body, or the
// status and text when the body is not one.
type apiError struct {
	// Message is the server's description of the error.
	Message string
	// Field names the invalid input, for 400s.
	Field string
	// Status is the HTTP status code.
	Status int
}

func (e *apiError) Error() string { return e.Message }

// errorMessage returns what the user sees for err: the server's own
// message for an API error, the whole chain otherwise.
func errorMessage(err error) string {
	if ae, ok := errors.AsType[*apiError](err); ok {
		return ae.Message
	}
	return err.Error()
}

// isNotFound reports whether err is the server answering 404.
func isNotFound(err error) bool {
	ae, ok := errors.AsType[*apiError](err)
	return ok && ae.Status == http.StatusNotFound
}

// get decodes the JSON answer of GET path?query into out.
func (c *client) get(ctx context.Context, path string, query url.Values, out any) error {
	return c.do(ctx, http.MethodGet, path, query, nil, out)
}

// put sends in as JSON to path and decodes the answer into out, if not nil.
func (c *client) put(ctx context.Context, path string, in, out any) error {
	return c.do(ctx, http.MethodPut, path, nil, in, out)
}

// delete sends DELETE path and decodes the answer into out, if not nil.
func (c *client) delete(ctx context.Context, path string, out any) error {
	return c.do(ctx, http.MethodDelete, path, nil, nil, out)
}

// stream sends GET path?query and returns the body of a successful answer
// for the caller to read and close.
func (c *client) stream(ctx context.Context, path string, query url.Values) (io.ReadCloser, error) {
	resp, err := c.send(ctx, http.MethodGet, path, query, nil)
	if err != nil {
		return nil, err
	}
	return resp.Body, nil
}

func (c *client) do(ctx context.Context, method, path string, query url.Values, in, out any) error {
	resp, err := c.send(ctx, method, path, query, in)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if out == nil {
		_, err = io.Copy(io.Discard, resp.Body)
		return err
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("decode answer to %s %s: %w", method, path, err)
	}
	return nil
}

// send makes a request and returns the response if its status is 2xx;
// otherwise it closes the body and returns an *apiError.
func (c *client) send(ctx context.Context, method, path string, query url.Values, in any) (*http.Response, error) {
	target := c.base + path
	query = withParams(query, c.at)
	if len(query) > 0 {
		target += "?" + query.Encode()
	}
	var body io.Reader
	contentType := "application/json"
	switch v := in.(type) {
	case nil:
	case io.Reader: // sent as it is: a file being uploaded
		body, contentType = v, "application/octet-stream"
	default:
		b, err := json.Marshal(in)
		if err != nil {
			return nil, fmt.Errorf("encode %s %s: %w", method, path, err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, target, body)
	if err != nil {
		return nil, fmt.Errorf("build %s %s: %w", method, path, err)
	}
	req.Header.Set("User-Agent", "ordo-cli/"+agent.Version)
	req.Header.Set("Accept", "application/json")
	if c.token != "" {
		req.Header.Set("X-Nomad-Token", c.token)
	}
	if c.secret != "" {
		req.Header.Set(httpapi.ClusterSecretHeader, c.secret)
	}
	if in != nil {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err // *url.Error already names the method and URL
	}
	if resp.StatusCode/100 != 2 {
		defer resp.Body.Close()
		return nil, decodeError(resp)
	}
	return resp, nil
}

// decodeError reads an error answer: ordo's {"Error","Field","Status"} body
// when there is one, else the status and the start of the body.
func decodeError(resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	var body struct {
		Error  string
		Field  string
		Status int
	}
	if json.Unmarshal(b, &body) == nil && body.Error != "" {
		if body.Status == 0 {
			body.Status = resp.StatusCode
		}
		return &apiError{Message: body.Error, Field: body.Field, Status: body.Status}
	}
	text := strings.TrimSpace(string(b))
	if text == "" {
		text = http.StatusText(resp.StatusCode)
	}
	return &apiError{Message: fmt.Sprintf("unexpected response %d: %s", resp.StatusCode, text), Status: resp.StatusCode}
}

// pathf builds an API path from format, escaping each argument as one
// path segment.
func pathf(format string, segments ...string) string {
	args := make([]any, len(segments))
	for i, s := range segments {
		args[i] = url.PathEscape(s)
	}
	return fmt.Sprintf(format, args...)
}
