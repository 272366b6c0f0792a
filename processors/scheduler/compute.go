package scheduler

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections/allocs"
)

// ErrUnknownJobType is returned for an eval whose job type has no scheduler.
var ErrUnknownJobType = errors.New("ordo: no scheduler for job type")

// Stop and update descriptions, as Nomad words them.
const (
	descJobStopped      = "alloc not needed due to job being stopped"
	descGroupRemoved    = "alloc not needed as task group was removed"
	descScaleDown       = "alloc not needed due to job update"
	descLost            = "alloc is lost since its node is down"
	descLostDisconnect  = "alloc is lost since its node is disconnected"
	descLostAfter       = "alloc is lost since its node has been disconnected longer than lost_after"
	descMigrate         = "alloc is being migrated"
	descUpdate          = "alloc is being updated due to job update"
	descReconnected     = "alloc not needed as the original allocation reconnected"
	descKeepReplacement = "alloc not needed as its replacement is kept after reconnect"
	descDuplicate       = "alloc not needed as another allocation has the same name"
	descNodeInfeasible  = "alloc not needed as node is no longer eligible for the job"
	descUnknown         = "alloc is unknown since its node is disconnected"
)

// EvalTriggerMaxDisconnectTimeout triggers the follow-up eval that marks
// unknown allocations lost once their group's lost_after has passed.
const EvalTriggerMaxDisconnectTimeout = "max-disconnect-timeout"

// followUpBatch groups delayed reschedules whose times are this close into
// one follow-up eval.
const followUpBatch = int64(5e9)

// Compute decides what to do for eval against st. It is a pure function of
// its inputs: the time it uses is the eval's (the latest of CreateTime,
// ModifyTime and WaitUntil, all leader times), and its only randomness is
// seeded from the eval id, so re-running an eval against the same State
// returns an identical plan.
// Options (WithScores) change what it records, never what it decides.
func Compute(st State, eval *events.Evaluation, opts ...Option) (*Plan, error) {
	if eval == nil {
		return nil, errors.New("ordo: compute: nil eval")
	}
	job, ok := st.Job(eval.Namespace, eval.JobID)
	if !ok {
		job = nil
	}
	typ := eval.Type
	if job != nil {
		typ = job.Type
	}
	switch typ {
	case events.JobTypeService, events.JobTypeBatch, events.JobTypeSystem, events.JobTypeSysbatch:
	default:
		if job != nil && !job.Stop {
			return nil, fmt.Errorf("compute eval %s: %w %q", eval.ID, ErrUnknownJobType, typ)
		}
	}
	s := newSched(st, eval, job)
	for _, o := range opts {
		o(s)
	}
	switch {
	case job == nil || job.Stop:
		s.stopAll()
	case typ == events.JobTypeSystem || typ == events.JobTypeSysbatch:
		s.computeSystem()
	default:
		s.computeGeneric()
	}
	s.finish()
	return s.plan, nil
}

// sched holds one Compute call's working state.
type sched struct {
	st   State
	eval *events.Evaluation
	job  *events.Job
	now  int64
	// spread: the cluster's algorithm is spread, read once per evaluation
	// (fitScore runs for every candidate node).
	spread bool
	// recordScores: Plan.Scores lists every node each placement scored
	// (WithScores).
	recordScores bool
	plan         *Plan
	rng          *rng
	ck           *checker

	// allocs are the job's allocations, by group, name index and id.
	allocs []*events.Allocation
	// stopped holds the ids the plan stops or marks lost.
	stopped map[string]bool
	// nodes indexes every node by id.
	nodes map[string]*Node

	// placement
	candidates     []*Node // schedulable nodes in the job's datacenters and pool, shuffled
	walk           walk    // the order placements visit candidates in (walk.go)
	limit          int
	nodesInPool    int
	nodesAvailable map[string]int
	feas           map[string]map[string]feasResult // group → node → result
	usage          map[string]*usage                // node → resources in use
	freed          map[string]*usage                // node → live resources stopped before usage was read
	onNode         map[string]int                   // node → live allocs of the job
	onNodeGroup    map[string]int                   // node\x00group → live allocs of the group
	planClaims     planClaims                       // volume key → claims this plan's placements make (csi.go)
	reserved       map[string][]events.PortRange    // node → its reserved ports, parsed (ports.go)
	ids            int
	taken          map[string]bool // ids derived from the eval the state holds (nextID)
	followUps      int
	deploymentID   string
}

type feasResult struct {
	ok     bool
	reason string
}

// usage is what a node's live allocations use, as the plan changes it:
// ports are the host ports the state says they hold (ascending, shared),
// portDelta what the plan's placements (+1) and stops (-1) change.
type usage struct {
	cpu, mem, disk int
	ports          []int
	portDelta      map[int]int
}

func newSched(st State, eval *events.Evaluation, job *events.Job) *sched {
	s := &sched{
		st: st, eval: eval, job: job, rng: newRNG(eval.ID), ck: newChecker(),
		now:     max(eval.CreateTime, eval.ModifyTime, eval.WaitUntil),
		spread:  st.SchedulerAlgorithm() == AlgorithmSpread,
		plan:    &Plan{EvalID: eval.ID, Namespace: eval.Namespace, JobID: eval.JobID, SnapshotIndex: st.Index()},
		stopped: map[string]bool{}, feas: map[string]map[string]feasResult{}, usage: map[string]*usage{}, freed: map[string]*usage{},
		onNode: map[string]int{}, onNodeGroup: map[string]int{},
	}
	s.allocs = slices.Clone(st.AllocsByJob(eval.Namespace, eval.JobID))
	slices.SortFunc(s.allocs, func(a, b *events.Allocation) int {
		if c := strings.Compare(a.TaskGroup, b.TaskGroup); c != 0 {
			return c
		}
		if c := cmp.Compare(nameIndex(a.Name), nameIndex(b.Name)); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	all := st.Nodes()
	if !slices.IsSortedFunc(all, func(a, b *Node) int { return strings.Compare(a.ID, b.ID) }) {
		all = slices.Clone(all)
		slices.SortFunc(all, func(a, b *Node) int { return strings.Compare(a.ID, b.ID) })
	}
	s.nodes = make(map[string]*Node, len(all))
	for _, n := range all {
		s.nodes[n.ID] = n
	}
	for _, a := range s.allocs {
		if !a.Terminal() {
			s.onNode[a.NodeID]++
			s.onNodeGroup[a.NodeID+"\x00"+a.TaskGroup]++
		}
	}
	if job != nil {
		s.nodesAvailable = map[string]int{}
		for _, n := range all {
			if !inPool(n.NodePool, job.NodePool) {
				continue
			}
			s.nodesInPool++
			if nodeSchedulable(n) && inDatacenters(n.Datacenter, job.Datacenters) {
				s.candidates = append(s.candidates, n)
				s.nodesAvailable[n.Datacenter]++
			}
		}
		s.rng.shuffle(s.candidates)
		s.walk = newWalk(s.candidates, s.rng, s.spread) // walk.go
		s.limit = 2
		if job.Type == events.JobTypeService && len(s.candidates) > 0 {
			s.limit = max(2, int(math.Ceil(math.Log2(float64(len(s.candidates))))))
		}
	}
	return s
}

// sortedNodes returns every node sorted by id.
func (s *sched) sortedNodes() []*Node {
	out := make([]*Node, 0, len(s.nodes))
	for _, n := range s.nodes {
		out = append(out, n)
	}
	slices.SortFunc(out, func(a, b *Node) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// nodeLost reports whether an allocation on node n (nil when gone) is lost.
func nodeLost(n *Node) bool { return n == nil || n.Status == events.NodeStatusDown }

// disconnect returns how group tg tolerates disconnects: whether it does,
// after how long an unknown allocation is lost (0: never), and whether it
// is replaced meanwhile.
func disconnect(tg *events.TaskGroup) (tolerates bool, lostAfter int64, replace bool) {
	if tg == nil {
		return false, 0, false
	}
	if d := tg.Disconnect; d != nil {
		return true, int64(d.LostAfter), d.Replace
	}
	if tg.MaxClientDisconnect > 0 {
		return true, int64(tg.MaxClientDisconnect), true
	}
	return false, 0, false
}

// stop appends a stop for a to the plan.
func (s *sched) stop(a *events.Allocation, desc, clientStatus string) {
	if s.stopped[a.ID] {
		return
	}
	s.stopped[a.ID] = true
	s.plan.Stops = append(s.plan.Stops, events.AllocDesiredUpdate{
		ID: a.ID, DesiredStatus: events.AllocDesiredStop, DesiredDescription: desc, ClientStatus: clientStatus})
	if !a.Terminal() {
		if u, ok := s.usage[a.NodeID]; ok {
			u.cpu -= a.Resources.CPU
			u.mem -= a.Resources.MemoryMB
			u.disk -= a.Resources.DiskMB
		} else {
			// Usage not read yet: remember what to take off when it is.
			f := s.freed[a.NodeID]
			if f == nil {
				f = &usage{}
				s.freed[a.NodeID] = f
			}
			f.cpu += a.Resources.CPU
			f.mem += a.Resources.MemoryMB
			f.disk += a.Resources.DiskMB
		}
		s.movePorts(a.NodeID, allocs.HostPorts(a), -1) // ports.go
		s.onNode[a.NodeID]--
		s.onNodeGroup[a.NodeID+"\x00"+a.TaskGroup]--
	}
}

// stopAll stops every live allocation of a stopped or purged job.
func (s *sched) stopAll() {
	for _, a := range s.allocs {
		if a.ServerTerminal() || a.ClientTerminal() {
			continue
		}
		cs := ""
		if nodeLost(s.nodes[a.NodeID]) {
			cs = events.AllocClientLost
		}
		s.stop(a, descJobStopped, cs)
	}
}

// markUnknown records a's client status as unknown (its node is
// disconnected and its group tolerates it) and, the first time, schedules
// the lost_after follow-up.
func (s *sched) markUnknown(a *events.Allocation, n *Node, lostAfter int64, timeouts *[]int64) {
	if a.ClientStatus == events.AllocClientUnknown {
		return
	}
	s.plan.Updates = append(s.plan.Updates, events.AllocDesiredUpdate{
		ID: a.ID, DesiredDescription: descUnknown, ClientStatus: events.AllocClientUnknown})
	if lostAfter > 0 {
		*timeouts = append(*timeouts, n.StatusUpdatedAt*1e9+lostAfter)
	}
}

// lostExpired reports whether an allocation on disconnected node n has
// been unknown longer than lostAfter.
func (s *sched) lostExpired(n *Node, lostAfter int64) bool {
	return lostAfter > 0 && s.now >= n.StatusUpdatedAt*1e9+lostAfter
}

// addTimeoutFollowUps adds one follow-up eval per distinct lost_after deadline.
func (s *sched) addTimeoutFollowUps(times []int64) {
	slices.Sort(times)
	times = slices.Compact(times)
	for _, t := range times {
		s.addFollowUp(EvalTriggerMaxDisconnectTimeout, t)
	}
}

// addFollowUp appends a follow-up eval that runs at waitUntil and returns its id.
func (s *sched) addFollowUp(trigger string, waitUntil int64) string {
	id := s.nextID("followup", &s.followUps)
	e := events.Evaluation{
		ID: id, Namespace: s.eval.Namespace, Priority: s.eval.Priority, Type: s.eval.Type,
		TriggeredBy: trigger, JobID: s.eval.JobID, Status: events.EvalStatusPending,
		WaitUntil: waitUntil, PreviousEval: s.eval.ID,
	}
	if s.job != nil {
		e.Priority, e.Type, e.JobModifyIndex = s.job.Priority, s.job.Type, s.eval.JobModifyIndex
	}
	if waitUntil > s.now {
		e.Wait = timeDuration(waitUntil - s.now)
	}
	s.plan.FollowUps = append(s.plan.FollowUps, e)
	return id
}

// finish fills the plan's summary fields.
func (s *sched) finish() {
	p := s.plan
	p.DeploymentID = s.deploymentID
	if len(p.FailedTGAllocs) > 0 {
		p.CreateBlockedEval = true
		if s.job != nil {
			p.EscapedComputedClass = escapesClass(s.job)
		}
	} else {
		p.ClassEligibility = nil
	}
	if s.job == nil || s.job.Stop {
		return
	}
	if p.QueuedAllocations == nil {
		p.QueuedAllocations = map[string]int{}
	}
	for i := range s.job.TaskGroups {
		name := s.job.TaskGroups[i].Name
		if _, ok := p.QueuedAllocations[name]; !ok {
			p.QueuedAllocations[name] = 0
		}
	}
	if s.job.Type == events.JobTypeBatch || s.job.Type == events.JobTypeSysbatch {
		p.Complete = s.complete()
	}
}

// complete reports whether nothing of the job runs or waits to run once the
// plan is committed.
func (s *sched) complete() bool {
	p := s.plan
	if len(p.Placements) > 0 || len(p.FollowUps) > 0 {
		return false
	}
	for _, q := range p.QueuedAllocations {
		if q > 0 {
			return false
		}
	}
	for _, a := range s.allocs {
		if !a.Terminal() && !s.stopped[a.ID] {
			return false
		}
	}
	return true
}
