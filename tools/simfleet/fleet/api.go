package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/ordoplane/ordo/api"
)

// The wire shapes of the client API (docs/api.md) the fleet sends and
// reads, kept to the fields a simulated node uses; answers shared with
// other callers are package api's.

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

// errReason classifies err for the errors metric: transport, timeout,
// status_404, status_409, status_4xx, status_5xx or decode.
func errReason(err error) string {
	var ne net.Error
	if ae, ok := errors.AsType[*api.Error](err); ok {
		switch {
		case ae.Status == http.StatusNotFound, ae.Status == http.StatusConflict:
			return "status_" + strconv.Itoa(ae.Status)
		case ae.Status >= 500:
			return "status_5xx"
		default:
			return "status_4xx"
		}
	}
	switch {
	case errors.Is(err, api.ErrDecode):
		return "decode"
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return "timeout"
	}
	return "transport"
}

// client calls the client API of a set of servers: an api.Client per
// server for each connection pool, the node choosing the server.
type client struct {
	calls      []*api.Client
	heartbeats []*api.Client
	watches    []*api.Client
	timeout    time.Duration
	conns      []*http.Client
}

func newClient(cfg Config) (*client, error) {
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
	c := &client{timeout: cfg.RequestTimeout, conns: []*http.Client{{Transport: pool()}, {Transport: pool()}, {Transport: watches}}}
	for _, s := range cfg.Servers {
		var per [3]*api.Client
		for i, hc := range c.conns {
			ac, err := api.New([]string{baseURL(s)}, api.WithHTTPClient(hc), api.WithRequestTimeout(cfg.RequestTimeout),
				api.WithUserAgent("ordo-simfleet"))
			if err != nil {
				return nil, fmt.Errorf("simfleet: %w", err)
			}
			per[i] = ac
		}
		c.calls, c.heartbeats, c.watches = append(c.calls, per[0]), append(c.heartbeats, per[1]), append(c.watches, per[2])
	}
	return c, nil
}

func (c *client) close() {
	for _, hc := range c.conns {
		hc.CloseIdleConnections()
	}
}

func (c *client) register(ctx context.Context, srv int, body []byte) (api.NodeWriteResponse, error) {
	var out api.NodeWriteResponse
	err := c.calls[srv].Put(ctx, "/v1/client/register", json.RawMessage(body), &out)
	return out, err
}

var readyBody = json.RawMessage(`{"Status":"ready"}`)

func (c *client) heartbeat(ctx context.Context, srv int, id string) (api.NodeWriteResponse, error) {
	var out api.NodeWriteResponse
	err := c.heartbeats[srv].Put(ctx, api.Pathf("/v1/client/%s/heartbeat", id), readyBody, &out)
	return out, err
}

func (c *client) updateAllocs(ctx context.Context, srv int, id string, updates []allocUpdate) (uint64, error) {
	var out struct{ Index uint64 }
	err := c.calls[srv].Put(ctx, api.Pathf("/v1/client/%s/allocs", id), struct{ Allocs []allocUpdate }{updates}, &out)
	return out.Index, err
}

// allocations reads node id's allocations; with index > 0 it blocks until
// they change past index or wait runs out. It answers X-Nomad-Index.
func (c *client) allocations(ctx context.Context, srv int, id string, index uint64, wait time.Duration) ([]serverAlloc, uint64, error) {
	req := &api.Request{Method: http.MethodGet, Path: api.Pathf("/v1/client/%s/allocations", id)}
	ac := c.calls[srv]
	if index > 0 {
		req.Query = &api.QueryOptions{Index: index, Wait: wait}
		req.Timeout = wait + c.timeout
		ac = c.watches[srv]
	}
	var list []serverAlloc
	meta, err := ac.Do(ctx, req, &list)
	if err != nil {
		return nil, 0, err
	}
	if meta.LastIndex == 0 {
		return nil, 0, fmt.Errorf("%w: no X-Nomad-Index", api.ErrDecode)
	}
	return list, meta.LastIndex, nil
}
