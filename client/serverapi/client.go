package serverapi

import (
	"context"
	"time"

	"github.com/ordoplane/ordo/api"
)

// defaultRequestTimeout bounds each request that is not a blocking query,
// unless an api.WithRequestTimeout option says otherwise.
const defaultRequestTimeout = 10 * time.Second

// Client makes the client agent's calls of the servers' client API. Build
// it with New.
type Client struct {
	api *api.Client
}

// New returns a client of the servers at addrs (host:port or URLs) over
// an api.Client built with opts; each request that is not a blocking
// query is bounded by 10s unless api.WithRequestTimeout says otherwise.
func New(addrs []string, opts ...api.Option) (*Client, error) {
	opts = append([]api.Option{api.WithRequestTimeout(defaultRequestTimeout)}, opts...)
	c, err := api.New(addrs, opts...)
	if err != nil {
		return nil, err
	}
	return &Client{api: c}, nil
}

// Servers returns the servers' base URLs.
func (c *Client) Servers() []string { return c.api.Servers() }

// do sends req and decodes its answer into out; it returns the answer's
// index.
func (c *Client) do(ctx context.Context, req *api.Request, out any) (uint64, error) {
	meta, err := c.api.Do(ctx, req, out)
	return meta.LastIndex, err
}
