package api

import (
	"context"
	"net/url"

	"github.com/ordoplane/ordo/events"
)

// ServiceRegistration is one instance of a Nomad-native service as GET
// /v1/service/:name answers it (Nomad's api.ServiceRegistration, with the
// checks' statuses).
type ServiceRegistration = events.ServiceRegistration

// ServiceStub is one service of a namespace in GET /v1/services: its name
// and the tags of its instances (Nomad's api.ServiceRegistrationStub).
type ServiceStub struct {
	ServiceName string
	Tags        []string
}

// ServiceList is one namespace's services in GET /v1/services (Nomad's
// api.ServiceRegistrationListStub).
type ServiceList struct {
	Namespace string
	Services  []ServiceStub
}

// Services lists the services of namespace ns ("*" for every namespace
// the caller may read; "" for the client's), grouped by namespace.
func (c *Client) Services(ctx context.Context, ns string) ([]ServiceList, QueryMeta, error) {
	var out []ServiceList
	meta, err := c.Query(ctx, "/v1/services", &QueryOptions{Namespace: ns}, &out)
	return out, meta, err
}

// Service returns the instances of service name in namespace ns ("" for
// the client's); q may make it a blocking query.
func (c *Client) Service(ctx context.Context, ns, name string, q *QueryOptions) ([]ServiceRegistration, QueryMeta, error) {
	opts := QueryOptions{}
	if q != nil {
		opts = *q
	}
	if ns != "" {
		opts.Namespace = ns
	}
	var out []ServiceRegistration
	meta, err := c.Query(ctx, Pathf("/v1/service/%s", name), &opts, &out)
	return out, meta, err
}

// DeleteService removes instance id of service name in namespace ns (""
// for the client's).
func (c *Client) DeleteService(ctx context.Context, ns, name, id string) error {
	var params url.Values
	if ns != "" {
		params = url.Values{"namespace": {ns}}
	}
	return c.Call(ctx, "DELETE", Pathf("/v1/service/%s/%s", name, id), params, nil, nil)
}
