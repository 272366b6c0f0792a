package scheduler

import (
	"cmp"
	"maps"
	"slices"

	"github.com/ordoplane/ordo/events"
)

// Canaries, as Nomad has them. A service group whose update strategy asks
// for canary = N (with max_parallel > 0) does not replace outdated
// allocations straight away when its tasks change: the job version's
// deployment first places N canaries of the new version beside them,
// records them in its group state (DesiredCanaries, PlacedCanaries,
// Promoted false) and makes no destructive progress until the group is
// promoted (by the user or by auto_promote in the deployment watcher).
//
// Until then the canaries hold no slot of the group: the old version keeps
// its count, so a scale up or the replacement of a lost allocation places
// the old version, and a scale down stops old allocations, never canaries.
// Once promoted, a canary is an ordinary allocation of the new version; it
// shares its name with the outdated allocation it was named after, which
// is then stopped (the current one of two allocations with one index
// stays), and the rest are replaced max_parallel at a time.
//
// Canaries of a deployment that ended unpromoted (failed, cancelled, or
// superseded by a deployment of a later version that is the job's latest)
// are stopped. An allocation flagged canary that belongs to another
// deployment loses a shared index to any other allocation.

// canaryState is one group's canary bookkeeping for one Compute.
type canaryState struct {
	// want is the update strategy's canary count; 0 without canaries.
	want int
	// promoted reports that the current deployment promoted the group.
	promoted bool
	// placed holds the current deployment's canaries while unpromoted.
	placed map[string]bool
	// live are the placed canaries still running, by name index.
	live []*events.Allocation
	// depID is the current (active) deployment's id, "" when none.
	depID string
}

// groupCanaries reads tg's canary state from the job's latest deployment
// and stops the canaries of a deployment that ended unpromoted.
func (s *sched) groupCanaries(tg *events.TaskGroup, allocs []*events.Allocation) *canaryState {
	cs := &canaryState{placed: map[string]bool{}}
	if s.job.Type == events.JobTypeService && tg.Update != nil && tg.Update.MaxParallel > 0 {
		cs.want = tg.Update.Canary
	}
	// The state's, not the plan's: a deployment this plan creates has no
	// canaries yet, and the one it replaces may have stale ones.
	d, ok := s.st.LatestDeployment(s.job.Namespace, s.job.ID)
	if !ok {
		return cs
	}
	st := d.TaskGroups[tg.Name]
	current := d.JobVersion == s.job.Version && d.Active()
	if current {
		cs.depID = d.ID
	}
	if st == nil || st.Promoted {
		cs.promoted = current && st != nil
		return cs
	}
	if current {
		for _, id := range st.PlacedCanaries {
			cs.placed[id] = true
		}
		return cs
	}
	// Ended or superseded before promotion: its canaries go.
	stale := map[string]bool{}
	for _, id := range st.PlacedCanaries {
		stale[id] = true
	}
	for _, a := range allocs {
		if stale[a.ID] && !a.Terminal() {
			s.stop(a, descScaleDown, "")
		}
	}
	return cs
}

// foreign reports whether a is flagged a canary of a deployment other than
// the current one (a client may drop the flag, so this only breaks ties).
func (cs *canaryState) foreign(a *events.Allocation) bool {
	return a.DeploymentStatus != nil && a.DeploymentStatus.Canary && a.DeploymentID != cs.depID
}

// canarying reports whether the group waits on canaries: it has them and
// is not promoted, and has placed some or still has outdated allocations.
func (cs *canaryState) canarying(outdated []*events.Allocation) bool {
	return cs.want > 0 && !cs.promoted && (len(cs.placed) > 0 || len(outdated) > 0)
}

// downgrade makes the group's placements while canaries await promotion
// use the old version (Nomad's downgradeNonCanary): a replacement that of
// the allocation it replaces when that is outdated, a new allocation that
// of the oldest outdated allocation kept.
func (s *sched) downgrade(tg *events.TaskGroup, needs []need, old []*events.Allocation, outdated func(*events.Allocation) bool) {
	versions := map[uint64]*events.Job{}
	version := func(v uint64) *events.Job {
		j, seen := versions[v]
		if !seen {
			if jv, ok := s.st.JobVersion(s.job.Namespace, s.job.ID, v); ok && group(jv, tg.Name) != nil {
				j = jv
			}
			versions[v] = j
		}
		return j
	}
	var oldest *events.Job
	if len(old) > 0 {
		v := slices.MinFunc(old, func(x, y *events.Allocation) int { return cmp.Compare(x.JobVersion, y.JobVersion) }).JobVersion
		oldest = version(v)
	}
	for i := range needs {
		nd := &needs[i]
		switch {
		case nd.prev == nil:
			nd.old = oldest
		case outdated(nd.prev):
			nd.old = version(nd.prev.JobVersion)
		}
	}
}

// placeCanaries returns the canaries still missing, named after the
// lowest outdated allocations first, then after the lowest free indexes,
// and makes sure the plan's deployment records DesiredCanaries. Nothing
// while the deployment is paused or failed.
func (s *sched) placeCanaries(tg *events.TaskGroup, cs *canaryState, old []*events.Allocation, used map[int]bool) []need {
	missing := cs.want - len(cs.live)
	if missing <= 0 || len(old) == 0 {
		return nil
	}
	d := s.ownDeployment()
	if d == nil {
		return nil
	}
	st := d.TaskGroups[tg.Name]
	if st == nil {
		st = &events.DeploymentState{DesiredTotal: tg.Count, AutoRevert: tg.Update.AutoRevert}
		d.TaskGroups[tg.Name] = st
	}
	st.DesiredCanaries = cs.want

	taken := map[int]bool{}
	for _, a := range cs.live {
		taken[nameIndex(a.Name)] = true
	}
	var idxs []int
	for _, a := range old {
		idxs = append(idxs, nameIndex(a.Name))
	}
	slices.Sort(idxs)
	var out []need
	for _, i := range slices.Compact(idxs) {
		if len(out) == missing {
			return out
		}
		if i >= 0 && !taken[i] {
			taken[i] = true
			out = append(out, need{index: i, canary: true})
		}
	}
	for i := 0; len(out) < missing; i++ {
		if !taken[i] && !used[i] {
			taken[i] = true
			out = append(out, need{index: i, canary: true})
		}
	}
	return out
}

// recordCanary adds a placed canary to the plan's deployment.
func (s *sched) recordCanary(tg *events.TaskGroup, id string) {
	if d := s.plan.Deployment; d != nil {
		if st := d.TaskGroups[tg.Name]; st != nil {
			st.PlacedCanaries = append(st.PlacedCanaries, id)
		}
	}
}

// ownDeployment returns the plan's deployment, which the plan may change:
// one it creates, or a copy of the job version's active deployment (an
// initializing or pending one recorded as running, as the scheduler now
// acts on it). nil when that deployment is paused or finished.
func (s *sched) ownDeployment() *events.Deployment {
	d := s.deployment()
	if d == nil || s.plan.Deployment == d {
		return d
	}
	c := cloneDeployment(d)
	if c.Status == events.DeploymentStatusInitializing || c.Status == events.DeploymentStatusPending {
		c.Status, c.StatusDescription = events.DeploymentStatusRunning, "Deployment is running"
	}
	s.plan.Deployment = c
	return c
}

// cloneDeployment returns a deep copy of d.
func cloneDeployment(d *events.Deployment) *events.Deployment {
	c := *d
	c.TaskGroups = maps.Clone(d.TaskGroups)
	for name, st := range c.TaskGroups {
		if st != nil {
			cp := *st
			cp.PlacedCanaries = slices.Clone(st.PlacedCanaries)
			c.TaskGroups[name] = &cp
		}
	}
	return &c
}
