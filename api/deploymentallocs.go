package api

import "context"

// DeploymentAllocations returns the allocations placed under deployment
// id (an id or unique prefix), oldest first, as GET
// /v1/deployment/allocations/<id> answers them; with q.Index set it blocks
// until they change (see Query).
func (c *Client) DeploymentAllocations(ctx context.Context, id string, q *QueryOptions) ([]AllocationListStub, QueryMeta, error) {
	var out []AllocationListStub
	meta, err := c.Query(ctx, Pathf("/v1/deployment/allocations/%s", id), q, &out)
	return out, meta, err
}
