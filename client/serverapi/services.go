package serverapi

import (
	"context"
	"fmt"
	"time"

	"github.com/ordoplane/ordo/api"
	"github.com/ordoplane/ordo/events"
)

// RegisterServices registers or updates the service instances of
// allocations on node nodeID (PUT /v1/client/:id/services) and returns
// the entry's index (the applied index when nothing changed). A
// registration the servers refuse (its allocation gone, terminal or on
// another node; a bad field) is an *api.Error whose status is 400 and
// whose message names the field; ErrNodeNotFound when the servers do not
// know the node.
func (c *Client) RegisterServices(ctx context.Context, nodeID string, regs []events.ServiceRegistration) (uint64, error) {
	if regs == nil {
		regs = []events.ServiceRegistration{}
	}
	var out struct{ Index uint64 }
	_, err := c.do(ctx, &api.Request{Method: "PUT", Path: api.Pathf("/v1/client/%s/services", nodeID),
		Body: map[string]any{"Services": regs}}, &out)
	if err != nil {
		return 0, fmt.Errorf("register services of node %s: %w", nodeID, nodeNotFound(err))
	}
	return out.Index, nil
}

// DeregisterServices removes service instances of allocations on node
// nodeID (PUT /v1/client/:id/services/deregister) and returns the entry's
// index; ids no longer registered are not an error.
func (c *Client) DeregisterServices(ctx context.Context, nodeID string, ids []string) (uint64, error) {
	if ids == nil {
		ids = []string{}
	}
	var out struct{ Index uint64 }
	_, err := c.do(ctx, &api.Request{Method: "PUT", Path: api.Pathf("/v1/client/%s/services/deregister", nodeID),
		Body: map[string]any{"IDs": ids}}, &out)
	if err != nil {
		return 0, fmt.Errorf("deregister services of node %s: %w", nodeID, err)
	}
	return out.Index, nil
}

// Service answers the instances of service name in namespace ns (GET
// /v1/service/:name). With index > 0 it is a blocking query: the servers
// answer once the service has changed after index, or after wait. The
// returned index is the one to pass next. A service with no instances is
// an empty list, not an error.
func (c *Client) Service(ctx context.Context, ns, name string, index uint64, wait time.Duration) ([]events.ServiceRegistration, uint64, error) {
	var list []events.ServiceRegistration
	next, err := c.do(ctx, &api.Request{Method: "GET", Path: api.Pathf("/v1/service/%s", name),
		Query: &api.QueryOptions{Namespace: ns, Index: index, Wait: wait}}, &list)
	if err != nil {
		return nil, 0, fmt.Errorf("service %s/%s: %w", ns, name, err)
	}
	return list, next, nil
}
