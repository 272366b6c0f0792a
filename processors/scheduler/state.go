package scheduler

import (
	"maps"
	"slices"
	"strings"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections/allocs"
	"github.com/ordoplane/ordo/projections/nodes"
)

// Node is a node as the scheduler reads it: the nodes projection's row,
// with status, eligibility, drain, resources, reserved, datacenter, pool,
// class, attributes, meta and drivers.
type Node = nodes.Node

// Usage is what a node's live allocations use, as the allocs
// projection's usage table keeps it: resources, count and host ports.
type Usage = allocs.Usage

// State is the read view a scheduler decides on: a snapshot of the
// projections at one index. Implementations must not change while Compute
// or Evaluate reads them. Returned values are shared and must not be
// modified by the caller.
type State interface {
	// Index is the applied index the snapshot reflects.
	Index() uint64
	// Job returns the job's latest version (stopped jobs included).
	Job(namespace, id string) (*events.Job, bool)
	// JobVersion returns an earlier version of the job, to tell in-place
	// from destructive updates; ok is false when it is not kept, and the
	// scheduler then treats the allocation's version as compatible.
	JobVersion(namespace, id string, version uint64) (*events.Job, bool)
	// Nodes returns every node, sorted by id.
	Nodes() []*Node
	// Node returns one node.
	Node(id string) (*Node, bool)
	// Alloc returns one allocation, terminal or not.
	Alloc(id string) (*events.Allocation, bool)
	// AllocsByJob returns every allocation of the job, terminal ones
	// included, in any order.
	AllocsByJob(namespace, jobID string) []*events.Allocation
	// AllocsByNode returns every allocation on the node, terminal ones
	// included, in any order.
	AllocsByNode(nodeID string) []*events.Allocation
	// NodeUsage returns what the node's live (non-terminal) allocations
	// use: resources and the host ports they hold.
	NodeUsage(nodeID string) Usage
	// LatestDeployment returns the job's most recent deployment.
	LatestDeployment(namespace, jobID string) (*events.Deployment, bool)
	// SchedulerAlgorithm is the cluster's placement algorithm,
	// AlgorithmBinpack or AlgorithmSpread (algorithm.go).
	SchedulerAlgorithm() string
}

var _ State = (*MemState)(nil)

// MemState is an in-memory State for tests, the planner harness and
// benchmarks. Its methods replace stored values and never mutate them, so
// callers must not mutate what they stored either. It is not safe for
// concurrent use (Nodes builds its sorted list lazily).
type MemState struct {
	index       uint64
	nodes       map[string]*Node
	sorted      []*Node
	jobs        map[string]*events.Job
	versions    map[string]map[uint64]*events.Job
	allocs      map[string]*events.Allocation
	byJob       map[string]map[string]*events.Allocation
	byNode      map[string]map[string]*events.Allocation
	deployments map[string]*events.Deployment
	algorithm   string
}

// NewMemState returns an empty state at index 0.
func NewMemState() *MemState {
	return &MemState{
		nodes: map[string]*Node{}, jobs: map[string]*events.Job{}, versions: map[string]map[uint64]*events.Job{},
		allocs: map[string]*events.Allocation{}, byJob: map[string]map[string]*events.Allocation{},
		byNode: map[string]map[string]*events.Allocation{}, deployments: map[string]*events.Deployment{},
	}
}

func jobKey(ns, id string) string { return ns + "\x00" + id }

// Clone returns a copy that later changes to either side do not affect
// (values are shared: the state replaces them, never mutates them).
func (s *MemState) Clone() *MemState {
	c := NewMemState()
	c.index = s.index
	maps.Copy(c.nodes, s.nodes)
	maps.Copy(c.jobs, s.jobs)
	for k, v := range s.versions {
		c.versions[k] = maps.Clone(v)
	}
	maps.Copy(c.allocs, s.allocs)
	for k, v := range s.byJob {
		c.byJob[k] = maps.Clone(v)
	}
	for k, v := range s.byNode {
		c.byNode[k] = maps.Clone(v)
	}
	maps.Copy(c.deployments, s.deployments)
	c.algorithm = s.algorithm
	return c
}

// SetIndex sets the index the state reports.
func (s *MemState) SetIndex(i uint64) { s.index = i }

// Index implements State.
func (s *MemState) Index() uint64 { return s.index }

// UpsertNode adds or replaces a node.
func (s *MemState) UpsertNode(n *Node) {
	s.nodes[n.ID] = n
	s.sorted = nil
}

// DeleteNode removes a node.
func (s *MemState) DeleteNode(id string) {
	delete(s.nodes, id)
	s.sorted = nil
}

// UpsertJob stores the job as its latest version and keeps the version.
func (s *MemState) UpsertJob(j *events.Job) {
	k := jobKey(j.Namespace, j.ID)
	s.jobs[k] = j
	if s.versions[k] == nil {
		s.versions[k] = map[uint64]*events.Job{}
	}
	s.versions[k][j.Version] = j
}

// DeleteJob removes the job (a purge); its versions go too.
func (s *MemState) DeleteJob(ns, id string) {
	delete(s.jobs, jobKey(ns, id))
	delete(s.versions, jobKey(ns, id))
}

// UpsertAlloc adds or replaces an allocation.
func (s *MemState) UpsertAlloc(a *events.Allocation) {
	if old, ok := s.allocs[a.ID]; ok && old.NodeID != a.NodeID {
		delete(s.byNode[old.NodeID], a.ID)
	}
	s.allocs[a.ID] = a
	jk := jobKey(a.Namespace, a.JobID)
	if s.byJob[jk] == nil {
		s.byJob[jk] = map[string]*events.Allocation{}
	}
	s.byJob[jk][a.ID] = a
	if s.byNode[a.NodeID] == nil {
		s.byNode[a.NodeID] = map[string]*events.Allocation{}
	}
	s.byNode[a.NodeID][a.ID] = a
}

// Alloc implements State.
func (s *MemState) Alloc(id string) (*events.Allocation, bool) {
	a, ok := s.allocs[id]
	return a, ok
}

// Allocs returns every allocation, sorted by id.
func (s *MemState) Allocs() []*events.Allocation {
	out := make([]*events.Allocation, 0, len(s.allocs))
	for _, a := range s.allocs {
		out = append(out, a)
	}
	slices.SortFunc(out, func(a, b *events.Allocation) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// UpsertDeployment stores a deployment as its job's latest.
func (s *MemState) UpsertDeployment(d *events.Deployment) {
	s.deployments[jobKey(d.Namespace, d.JobID)] = d
}

// Job implements State.
func (s *MemState) Job(ns, id string) (*events.Job, bool) {
	j, ok := s.jobs[jobKey(ns, id)]
	return j, ok
}

// JobVersion implements State.
func (s *MemState) JobVersion(ns, id string, v uint64) (*events.Job, bool) {
	j, ok := s.versions[jobKey(ns, id)][v]
	return j, ok
}

// Nodes implements State.
func (s *MemState) Nodes() []*Node {
	if s.sorted == nil {
		s.sorted = make([]*Node, 0, len(s.nodes))
		for _, n := range s.nodes {
			s.sorted = append(s.sorted, n)
		}
		slices.SortFunc(s.sorted, func(a, b *Node) int { return strings.Compare(a.ID, b.ID) })
	}
	return s.sorted
}

// Node implements State.
func (s *MemState) Node(id string) (*Node, bool) {
	n, ok := s.nodes[id]
	return n, ok
}

func values(m map[string]*events.Allocation) []*events.Allocation {
	out := make([]*events.Allocation, 0, len(m))
	for _, a := range m {
		out = append(out, a)
	}
	return out
}

// AllocsByJob implements State.
func (s *MemState) AllocsByJob(ns, jobID string) []*events.Allocation {
	return values(s.byJob[jobKey(ns, jobID)])
}

// AllocsByNode implements State.
func (s *MemState) AllocsByNode(nodeID string) []*events.Allocation {
	return values(s.byNode[nodeID])
}

// LatestDeployment implements State.
func (s *MemState) LatestDeployment(ns, jobID string) (*events.Deployment, bool) {
	d, ok := s.deployments[jobKey(ns, jobID)]
	return d, ok
}

// NodeUsage implements State by summing the node's live allocations.
func (s *MemState) NodeUsage(nodeID string) Usage {
	var u Usage
	for _, a := range s.byNode[nodeID] {
		if !a.Terminal() {
			u.Resources.CPU += a.Resources.CPU
			u.Resources.MemoryMB += a.Resources.MemoryMB
			u.Resources.DiskMB += a.Resources.DiskMB
			u.Allocs++
			u.Ports = append(u.Ports, allocs.HostPorts(a)...)
		}
	}
	slices.Sort(u.Ports)
	return u
}
