package serverapi

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/ordoplane/ordo/api"
)

// Variable answers the variable at path in namespace ns with its items
// (GET /v1/var/:path), presenting token (a workload identity; "" for
// none); nil when there is none. With index > 0 it is a blocking query.
func (c *Client) Variable(ctx context.Context, ns, path, token string, index uint64, wait time.Duration) (*api.Variable, uint64, error) {
	var v api.Variable
	next, err := c.do(ctx, &api.Request{Method: "GET", Path: varPath(path), Token: token,
		Query: &api.QueryOptions{Namespace: ns, Index: index, Wait: wait}}, &v)
	if api.IsNotFound(err) {
		return nil, next, nil
	}
	if err != nil {
		return nil, 0, fmt.Errorf("variable %s/%s: %w", ns, path, err)
	}
	return &v, next, nil
}

// Variables lists the metadata of the variables of namespace ns whose
// path starts with prefix (GET /v1/vars), every page, presenting token.
// With index > 0 it is a blocking query.
func (c *Client) Variables(ctx context.Context, ns, prefix, token string, index uint64, wait time.Duration) ([]api.Variable, uint64, error) {
	var (
		out  []api.Variable
		next uint64
		tok  string
	)
	for {
		params := url.Values{"prefix": {prefix}}
		if tok != "" {
			params.Set("next_token", tok)
		}
		var page []api.Variable
		meta, err := c.api.Do(ctx, &api.Request{Method: "GET", Path: "/v1/vars", Params: params, Token: token,
			Query: &api.QueryOptions{Namespace: ns, Index: index, Wait: wait}}, &page)
		if err != nil {
			return nil, 0, fmt.Errorf("variables %s/%s: %w", ns, prefix, err)
		}
		out = append(out, page...)
		if next == 0 {
			next = meta.LastIndex
		}
		if meta.NextToken == "" {
			return out, next, nil
		}
		tok, index = meta.NextToken, 0 // later pages answer at once
	}
}

// ServiceStub is one service of a namespace: its name and its instances'
// tags (Nomad's api.ServiceRegistrationStub).
type ServiceStub struct {
	ServiceName string
	Tags        []string
}

// Services lists the services of namespace ns (GET /v1/services). With
// index > 0 it is a blocking query.
func (c *Client) Services(ctx context.Context, ns, token string, index uint64, wait time.Duration) ([]ServiceStub, uint64, error) {
	var list []struct {
		Namespace string
		Services  []ServiceStub
	}
	next, err := c.do(ctx, &api.Request{Method: "GET", Path: "/v1/services", Token: token,
		Query: &api.QueryOptions{Namespace: ns, Index: index, Wait: wait}}, &list)
	if err != nil {
		return nil, 0, fmt.Errorf("services of %s: %w", ns, err)
	}
	var out []ServiceStub
	for _, l := range list {
		if l.Namespace == ns {
			out = append(out, l.Services...)
		}
	}
	return out, next, nil
}

// AllocIdentity returns the workload identity (a JWT) of task in
// allocation allocID, which runs on node nodeID (GET
// /v1/allocation/:id/identity?node_id=). The token is a bearer secret:
// callers never log it.
func (c *Client) AllocIdentity(ctx context.Context, nodeID, allocID, task string) (string, error) {
	var out struct{ JWT, KeyID string }
	_, err := c.do(ctx, &api.Request{Method: "GET", Path: api.Pathf("/v1/allocation/%s/identity", allocID),
		Params: url.Values{"task": {task}, "node_id": {nodeID}}}, &out)
	if err != nil {
		return "", fmt.Errorf("identity of %s/%s: %w", allocID, task, err)
	}
	return out.JWT, nil
}

// varPath is the API path of the variable at path, each segment escaped.
func varPath(path string) string {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return "/v1/var/" + strings.Join(segs, "/")
}
