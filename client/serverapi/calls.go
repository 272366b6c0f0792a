package serverapi

import (
	"context"
	"fmt"
	"net/url"
	"time"

	"github.com/ordoplane/ordo/api"
	"github.com/ordoplane/ordo/events"
)

// Register registers (or re-registers) node and returns the TTL within
// which it must heartbeat. Registering never changes an existing node's
// status (N1).
func (c *Client) Register(ctx context.Context, node events.Node) (time.Duration, error) {
	var out api.NodeWriteResponse
	if _, err := c.do(ctx, &api.Request{Method: "PUT", Path: "/v1/client/register", Body: node}, &out); err != nil {
		return 0, fmt.Errorf("register node %s: %w", node.ID, err)
	}
	return out.HeartbeatTTL, nil
}

// Heartbeat asks for node id to be status (ready or initializing) and
// returns the TTL of the next heartbeat; ErrNodeNotFound when the servers
// do not know the node.
func (c *Client) Heartbeat(ctx context.Context, id, status string) (time.Duration, error) {
	var out api.NodeWriteResponse
	_, err := c.do(ctx, &api.Request{Method: "PUT", Path: api.Pathf("/v1/client/%s/heartbeat", id),
		Body: map[string]string{"Status": status}}, &out)
	if err != nil {
		return 0, fmt.Errorf("heartbeat node %s: %w", id, nodeNotFound(err))
	}
	return out.HeartbeatTTL, nil
}

// UpdateAllocs reports what became of allocations on node id (an empty
// list records alone that the node reported, which a reconnecting node
// needs before it is ready again, N1) and returns the entry's index.
// ErrNodeNotFound when the servers do not know the node; an error
// whose AllocIndex names the update the servers refused otherwise.
func (c *Client) UpdateAllocs(ctx context.Context, id string, updates []events.AllocClientUpdate) (uint64, error) {
	if updates == nil {
		updates = []events.AllocClientUpdate{}
	}
	var out struct{ Index uint64 }
	_, err := c.do(ctx, &api.Request{Method: "PUT", Path: api.Pathf("/v1/client/%s/allocs", id),
		Body: map[string]any{"Allocs": updates}}, &out)
	if err != nil {
		return 0, fmt.Errorf("update allocs of node %s: %w", id, nodeNotFound(err))
	}
	return out.Index, nil
}

// nodeNotFound adds ErrNodeNotFound to a 404.
func nodeNotFound(err error) error {
	if api.IsNotFound(err) {
		return fmt.Errorf("%w: %w", ErrNodeNotFound, err)
	}
	return err
}

// Alloc is an allocation as the client watches it.
type Alloc struct {
	events.Allocation
	// AllocModifyIndex is the index of the allocation's last change.
	AllocModifyIndex uint64
}

// wireAlloc is the fields of Nomad's api.Allocation the client reads.
type wireAlloc struct {
	ID                 string
	Namespace          string
	EvalID             string
	Name               string
	NodeID             string
	NodeName           string
	JobID              string
	JobVersion         uint64
	TaskGroup          string
	Resources          events.Resources
	AllocatedResources *events.AllocatedResources
	DesiredStatus      string
	DesiredDescription string
	DesiredTransition  events.DesiredTransition
	ClientStatus       string
	ClientDescription  string
	DeploymentID       string
	DeploymentStatus   *struct {
		Healthy   *bool
		Timestamp time.Time
		Canary    bool
	}
	PreviousAllocation string
	NextAllocation     string
	AllocModifyIndex   uint64
	CreateTime         int64
	ModifyTime         int64
}

func (w *wireAlloc) alloc() Alloc {
	a := Alloc{Allocation: events.Allocation{ID: w.ID, Namespace: w.Namespace, EvalID: w.EvalID, Name: w.Name,
		NodeID: w.NodeID, NodeName: w.NodeName, JobID: w.JobID, JobVersion: w.JobVersion, TaskGroup: w.TaskGroup,
		Resources: w.Resources, AllocatedResources: w.AllocatedResources, DesiredStatus: w.DesiredStatus, DesiredDescription: w.DesiredDescription,
		DesiredTransition: w.DesiredTransition, ClientStatus: w.ClientStatus, ClientDescription: w.ClientDescription,
		DeploymentID: w.DeploymentID, PreviousAllocation: w.PreviousAllocation, NextAllocation: w.NextAllocation,
		CreateTime: w.CreateTime, ModifyTime: w.ModifyTime}, AllocModifyIndex: w.AllocModifyIndex}
	if s := w.DeploymentStatus; s != nil {
		ds := &events.AllocDeploymentStatus{Healthy: s.Healthy, Canary: s.Canary}
		if !s.Timestamp.IsZero() {
			ds.Timestamp = s.Timestamp.UnixNano()
		}
		a.DeploymentStatus = ds
	}
	return a
}

// Allocations answers every allocation on node id. With index > 0 it is
// a blocking query: the servers answer once their allocations have
// changed after index, or after wait. The returned index is the one to
// pass next.
func (c *Client) Allocations(ctx context.Context, id string, index uint64, wait time.Duration) ([]Alloc, uint64, error) {
	var list []wireAlloc
	next, err := c.do(ctx, &api.Request{Method: "GET", Path: api.Pathf("/v1/client/%s/allocations", id),
		Query: &api.QueryOptions{Index: index, Wait: wait}}, &list)
	if err != nil {
		return nil, 0, fmt.Errorf("allocations of node %s: %w", id, err)
	}
	out := make([]Alloc, len(list))
	for i := range list {
		out[i] = list[i].alloc()
	}
	return out, next, nil
}

// Job returns version of job id in namespace ns: the current job when it
// is at that version, else from the job's versions. An *api.Error with
// NotFound when the job or the version no longer exists.
func (c *Client) Job(ctx context.Context, ns, id string, version uint64) (*events.Job, error) {
	q := url.Values{"namespace": {ns}}
	path := api.Pathf("/v1/job/%s", id)
	var cur events.Job
	if _, err := c.do(ctx, &api.Request{Method: "GET", Path: path, Params: q}, &cur); err != nil {
		return nil, fmt.Errorf("job %s/%s: %w", ns, id, err)
	}
	if cur.Version == version {
		return &cur, nil
	}
	var vs struct{ Versions []events.Job }
	if _, err := c.do(ctx, &api.Request{Method: "GET", Path: path + "/versions", Params: q}, &vs); err != nil {
		return nil, fmt.Errorf("versions of job %s/%s: %w", ns, id, err)
	}
	for i := range vs.Versions {
		if vs.Versions[i].Version == version {
			return &vs.Versions[i], nil
		}
	}
	return nil, fmt.Errorf("job %s/%s: %w", ns, id,
		&api.Error{Method: "GET", Path: path + "/versions", Status: 404, Message: fmt.Sprintf("version %d not found", version)})
}
