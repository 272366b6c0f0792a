package schedstate

import (
	"errors"
	"fmt"
	"sort"
	"sync"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/processors/follow"
	"github.com/ordoplane/ordo/processors/scheduler"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/allocs"
	"github.com/ordoplane/ordo/projections/deployments"
	"github.com/ordoplane/ordo/projections/jobs"
	"github.com/ordoplane/ordo/projections/nodes"
	"github.com/ordoplane/ordo/projections/schedconfig"
)

// Source hands out States over snapshots of the store.
type Source struct {
	Store    follow.Snapshotter
	Notifier *projections.Notifier

	// nodes caches the decoded node list by the nodes table's index: it
	// changes far less often than schedulers ask for it.
	nodes indexCache[nodeSet]
	// usage caches every node's usage by the usage table's index: one scan
	// serves every worker and the plan applier until the next commit.
	usage indexCache[map[string]allocs.Usage]
}

// nodeSet is the node list sorted by id and the same nodes by id.
type nodeSet struct {
	list []*scheduler.Node
	byID map[string]*scheduler.Node
}

// indexCache holds one value read at a table index. Readers at that index
// share it; a read at a newer index replaces it, one at an older index is
// not kept.
type indexCache[T any] struct {
	mu    sync.Mutex
	ok    bool
	index uint64
	value T
}

func (c *indexCache[T]) get(index uint64, read func() (T, error)) (T, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ok && c.index == index {
		return c.value, nil
	}
	v, err := read()
	if err != nil {
		return v, err
	}
	if !c.ok || index > c.index {
		c.ok, c.index, c.value = true, index, v
	}
	return v, nil
}

// Applied returns the applied index and a channel closed at the next apply.
func (s *Source) Applied() (uint64, <-chan struct{}) { return s.Notifier.Applied() }

// State returns a State over a fresh snapshot; release closes it.
func (s *Source) State() (scheduler.State, func(), error) {
	snap := s.Store.Snapshot()
	st, err := New(projections.NewView(snap))
	if err != nil {
		snap.Close()
		return nil, nil, err
	}
	st.src = s
	return st, func() { snap.Close() }, nil
}

// State is a scheduler.State over a projections view.
type State struct {
	v     projections.View
	index uint64
	src   *Source // nil outside a Source: no node cache

	mu struct {
		sync.Mutex
		nodes *nodeSet
		usage map[string]allocs.Usage
		err   error
		// byNode and byJob memoise alloc lookups: the snapshot never
		// changes, and the scheduler asks about each node many times.
		byNode map[string][]*events.Allocation
		byJob  map[string][]*events.Allocation
	}
}

var _ scheduler.State = (*State)(nil)

// New returns a State over v.
func New(v projections.View) (*State, error) {
	idx, err := v.AppliedIndex()
	if err != nil {
		return nil, err
	}
	return &State{v: v, index: idx}, nil
}

// Err returns the first read error the State met.
func (s *State) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mu.err
}

func (s *State) fail(err error) {
	if err == nil || errors.Is(err, projections.ErrNotFound) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mu.err == nil {
		s.mu.err = err
	}
}

// Index implements scheduler.State.
func (s *State) Index() uint64 { return s.index }

// Job implements scheduler.State.
func (s *State) Job(namespace, id string) (*events.Job, bool) {
	j, err := jobs.Get(s.v, namespace, id)
	if err != nil {
		s.fail(err)
		return nil, false
	}
	return &j.Job, true
}

// JobVersion implements scheduler.State.
func (s *State) JobVersion(namespace, id string, version uint64) (*events.Job, bool) {
	vs, err := jobs.Versions(s.v, namespace, id)
	if err != nil {
		s.fail(err)
		return nil, false
	}
	for _, j := range vs {
		if j.Version == version {
			return &j.Job, true
		}
	}
	return nil, false
}

// Nodes implements scheduler.State: every node, sorted by id, read once per State.
func (s *State) Nodes() []*scheduler.Node { return s.nodeSet().list }

// nodeSet reads the nodes once per State, through the Source's cache.
func (s *State) nodeSet() *nodeSet {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mu.nodes == nil {
		read := func() (nodeSet, error) {
			list, err := nodes.List(s.v, "")
			sort.Slice(list, func(i, j int) bool { return list[i].ID < list[j].ID })
			set := nodeSet{list: list, byID: make(map[string]*scheduler.Node, len(list))}
			for _, n := range list {
				set.byID[n.ID] = n
			}
			return set, err
		}
		var set nodeSet
		var err error
		if ti, terr := s.v.TableIndex(nodes.Table); terr == nil && s.src != nil {
			set, err = s.src.nodes.get(ti, read)
		} else {
			set, err = read()
		}
		if err != nil && s.mu.err == nil {
			s.mu.err = fmt.Errorf("list nodes: %w", err)
		}
		s.mu.nodes = &set
	}
	return s.mu.nodes
}

// Node implements scheduler.State.
func (s *State) Node(id string) (*scheduler.Node, bool) {
	if s.src != nil {
		n, ok := s.nodeSet().byID[id]
		return n, ok
	}
	n, err := nodes.Get(s.v, id)
	if err != nil {
		s.fail(err)
		return nil, false
	}
	return n, true
}

// Alloc implements scheduler.State.
func (s *State) Alloc(id string) (*events.Allocation, bool) {
	a, err := allocs.Get(s.v, id)
	if err != nil {
		s.fail(err)
		return nil, false
	}
	return &a.Allocation, true
}

// AllocsByJob implements scheduler.State.
func (s *State) AllocsByJob(namespace, jobID string) []*events.Allocation {
	key := namespace + "\x00" + jobID
	s.mu.Lock()
	if list, ok := s.mu.byJob[key]; ok {
		s.mu.Unlock()
		return list
	}
	s.mu.Unlock()
	list, err := allocs.ByJob(s.v, namespace, jobID)
	s.fail(err)
	out := unwrap(list)
	s.mu.Lock()
	if s.mu.byJob == nil {
		s.mu.byJob = map[string][]*events.Allocation{}
	}
	s.mu.byJob[key] = out
	s.mu.Unlock()
	return out
}

// AllocsByNode implements scheduler.State.
func (s *State) AllocsByNode(nodeID string) []*events.Allocation {
	s.mu.Lock()
	if list, ok := s.mu.byNode[nodeID]; ok {
		s.mu.Unlock()
		return list
	}
	s.mu.Unlock()
	list, err := allocs.ByNode(s.v, nodeID)
	s.fail(err)
	out := unwrap(list)
	s.mu.Lock()
	if s.mu.byNode == nil {
		s.mu.byNode = map[string][]*events.Allocation{}
	}
	s.mu.byNode[nodeID] = out
	s.mu.Unlock()
	return out
}

// NodeUsage implements scheduler.State from the allocs projection's
// per-node usage table: through the Source's cache of the whole table when
// there is a Source, else one lookup.
func (s *State) NodeUsage(nodeID string) scheduler.Usage {
	if s.src == nil {
		u, err := allocs.NodeUsage(s.v, nodeID)
		s.fail(err)
		return u
	}
	s.mu.Lock()
	all := s.mu.usage
	s.mu.Unlock()
	if all == nil {
		ti, err := s.v.TableIndex(allocs.UsageTable)
		if err == nil {
			all, err = s.src.usage.get(ti, func() (map[string]allocs.Usage, error) { return allocs.AllUsage(s.v) })
		}
		if err != nil {
			s.fail(fmt.Errorf("read node usage: %w", err))
			all = map[string]allocs.Usage{}
		}
		s.mu.Lock()
		s.mu.usage = all
		s.mu.Unlock()
	}
	return all[nodeID]
}

// LatestDeployment implements scheduler.State.
func (s *State) LatestDeployment(namespace, jobID string) (*events.Deployment, bool) {
	d, err := deployments.Latest(s.v, namespace, jobID)
	if err != nil {
		s.fail(err)
		return nil, false
	}
	return &d.Deployment, true
}

func unwrap(list []*allocs.Alloc) []*events.Allocation {
	out := make([]*events.Allocation, len(list))
	for i, a := range list {
		out[i] = &a.Allocation
	}
	return out
}

// SchedulerAlgorithm implements scheduler.State: the scheduler
// configuration's algorithm at the snapshot's index.
func (s *State) SchedulerAlgorithm() string {
	c, err := schedconfig.Get(s.v)
	if err != nil {
		s.fail(err)
		return scheduler.AlgorithmBinpack
	}
	return c.Algorithm()
}
