package fleet

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// The wire shapes of the client API (docs/api.md), declared here rather
// than imported so the fleet is an outside client like any other.

// nodeBody is the body of PUT /v1/client/register.
type nodeBody struct {
	ID         string
	Name       string
	Datacenter string
	NodeClass  string            `json:",omitempty"`
	NodePool   string            `json:",omitempty"`
	Attributes map[string]string `json:",omitempty"`
	Meta       map[string]string `json:",omitempty"`
	Resources  resources
	Drivers    map[string]driverInfo `json:",omitempty"`
	Status     string
}

type resources struct {
	CPU      int
	MemoryMB int
	DiskMB   int
}

type driverInfo struct {
	Detected          bool
	Healthy           bool
	HealthDescription string `json:",omitempty"`
}

// nodeAnswer is the answer to register and heartbeat.
type nodeAnswer struct {
	HeartbeatTTL time.Duration // nanoseconds on the wire
	Index        uint64
}

// serverAlloc is what a node reads of each of its allocations.
type serverAlloc struct {
	ID               string
	JobID            string
	TaskGroup        string
	DesiredStatus    string
	ClientStatus     string
	DeploymentID     string
	DeploymentStatus *serverHealth
	ModifyIndex      uint64
}

// serverHealth is an allocation's health in its deployment, as the
// servers answer it (Timestamp is a time there, and unused here).
type serverHealth struct {
	Healthy *bool
	Canary  bool
}

// allocUpdate is one allocation in PUT /v1/client/:id/allocs.
type allocUpdate struct {
	ID                string
	ClientStatus      string
	ClientDescription string            `json:",omitempty"`
	DeploymentStatus  *deploymentStatus `json:",omitempty"`
}

type deploymentStatus struct {
	Healthy   *bool
	Timestamp int64 // Unix ns
	Canary    bool
}

// CallError is an answer other than 200 from a server.
type CallError struct {
	Call   string // register, heartbeat, watch, update
	Status int
	Body   string
}

func (e *CallError) Error() string {
	return fmt.Sprintf("simfleet: %s: %d %s", e.Call, e.Status, e.Body)
}

// errReason classifies err for the errors metric: transport, timeout,
// status_404, status_409, status_4xx, status_5xx or decode.
func errReason(err error) string {
	var ce *CallError
	var ne net.Error
	switch {
	case errors.As(err, &ce):
		switch {
		case ce.Status == http.StatusNotFound, ce.Status == http.StatusConflict:
			return "status_" + strconv.Itoa(ce.Status)
		case ce.Status >= 500:
			return "status_5xx"
		default:
			return "status_4xx"
		}
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return "timeout"
	case errors.Is(err, errDecode):
		return "decode"
	}
	return "transport"
}

var errDecode = errors.New("simfleet: cannot decode the answer")

// client calls the client API of a set of servers.
type client struct {
	servers    []string // base URLs
	calls      *http.Client
	heartbeats *http.Client
	watches    *http.Client
	timeout    time.Duration
}

func newClient(cfg Config) *client {
	dialer := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	pool := func() *http.Transport {
		return &http.Transport{
			DialContext:         dialer.DialContext,
			MaxIdleConns:        cfg.CallConns * len(cfg.Servers),
			MaxIdleConnsPerHost: cfg.CallConns,
			MaxConnsPerHost:     cfg.CallConns,
			IdleConnTimeout:     5 * time.Minute,
			DisableCompression:  true,
		}
	}
	// Heartbeats have a pool of their own: a real client's heartbeat does
	// not wait behind other nodes' slow updates, and a heartbeat queued
	// here past the servers' grace would be a miss the fleet caused.
	// One idle slot per node and server: a long-poll that returns goes
	// back to the pool, and the next one takes it instead of dialling.
	watches := &http.Transport{
		DialContext:         dialer.DialContext,
		MaxIdleConns:        0, // no limit across hosts
		MaxIdleConnsPerHost: cfg.Nodes + 16,
		IdleConnTimeout:     cfg.WatchWait + time.Minute,
		DisableCompression:  true,
	}
	c := &client{calls: &http.Client{Transport: pool()}, heartbeats: &http.Client{Transport: pool()},
		watches: &http.Client{Transport: watches}, timeout: cfg.RequestTimeout}
	for _, s := range cfg.Servers {
		c.servers = append(c.servers, baseURL(s))
	}
	return c
}

func (c *client) close() {
	c.calls.CloseIdleConnections()
	c.heartbeats.CloseIdleConnections()
	c.watches.CloseIdleConnections()
}

func (c *client) register(ctx context.Context, srv int, body []byte) (nodeAnswer, error) {
	var out nodeAnswer
	_, err := c.do(ctx, c.calls, "register", http.MethodPut, c.servers[srv]+"/v1/client/register", body, &out)
	return out, err
}

var readyBody = []byte(`{"Status":"ready"}`)

func (c *client) heartbeat(ctx context.Context, srv int, id string) (nodeAnswer, error) {
	var out nodeAnswer
	_, err := c.do(ctx, c.heartbeats, "heartbeat", http.MethodPut, c.servers[srv]+"/v1/client/"+url.PathEscape(id)+"/heartbeat", readyBody, &out)
	return out, err
}

func (c *client) updateAllocs(ctx context.Context, srv int, id string, updates []allocUpdate) (uint64, error) {
	body, err := json.Marshal(struct{ Allocs []allocUpdate }{updates})
	if err != nil {
		return 0, err
	}
	var out struct{ Index uint64 }
	_, err = c.do(ctx, c.calls, "update", http.MethodPut, c.servers[srv]+"/v1/client/"+url.PathEscape(id)+"/allocs", body, &out)
	return out.Index, err
}

// allocations reads node id's allocations; with index > 0 it blocks until
// they change past index or wait runs out. It answers X-Nomad-Index.
func (c *client) allocations(ctx context.Context, srv int, id string, index uint64, wait time.Duration) ([]serverAlloc, uint64, error) {
	u := c.servers[srv] + "/v1/client/" + url.PathEscape(id) + "/allocations"
	hc := c.calls
	if index > 0 {
		u += "?index=" + strconv.FormatUint(index, 10) + "&wait=" + strconv.FormatInt(int64(wait/time.Millisecond), 10) + "ms"
		hc = c.watches
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, wait+c.timeout)
		defer cancel()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, 0, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, 0, err
	}
	defer drain(resp)
	if resp.StatusCode != http.StatusOK {
		return nil, 0, callError("watch", resp)
	}
	idx, err := strconv.ParseUint(resp.Header.Get("X-Nomad-Index"), 10, 64)
	if err != nil {
		return nil, 0, fmt.Errorf("%w: X-Nomad-Index %q", errDecode, resp.Header.Get("X-Nomad-Index"))
	}
	var list []serverAlloc
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		return nil, 0, fmt.Errorf("%w: allocations: %v", errDecode, err)
	}
	return list, idx, nil
}

// do sends a call with the request timeout and decodes a 200 answer into out.
func (c *client) do(ctx context.Context, hc *http.Client, call, method, u string, body []byte, out any) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, u, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return 0, err
	}
	defer drain(resp)
	if resp.StatusCode != http.StatusOK {
		return resp.StatusCode, callError(call, resp)
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return resp.StatusCode, fmt.Errorf("%w: %s: %v", errDecode, call, err)
	}
	return resp.StatusCode, nil
}

func callError(call string, resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	return &CallError{Call: call, Status: resp.StatusCode, Body: string(bytes.TrimSpace(b))}
}

// drain reads what is left of a body so its connection is reused.
func drain(resp *http.Response) {
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
}
