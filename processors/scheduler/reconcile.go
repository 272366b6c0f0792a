package scheduler

import (
	"cmp"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections/allocs"
)

// allocName returns job.group[index].
func allocName(jobID, group string, index int) string {
	return jobID + "." + group + "[" + strconv.Itoa(index) + "]"
}

// nameIndex parses the index out of job.group[index]; -1 if there is none.
func nameIndex(name string) int {
	i := strings.LastIndexByte(name, '[')
	if i < 0 || !strings.HasSuffix(name, "]") {
		return -1
	}
	n, err := strconv.Atoi(name[i+1 : len(name)-1])
	if err != nil {
		return -1
	}
	return n
}

// need is one allocation to place.
type need struct {
	index int
	// prev is the allocation replaced, nil for a new one.
	prev *events.Allocation
	// stopPrev stops prev only once its replacement is placed (migration,
	// destructive update); lost and failed allocations are stopped anyway.
	stopPrev string
	// resched marks a reschedule of a failed allocation.
	resched bool
	// destructive marks an update placed under the deployment.
	destructive bool
	// canary marks a canary of the deployment (canary.go): placed beside
	// the allocations it will replace, which keep running until promotion.
	canary bool
	// old, when set, is the earlier job version to place instead of the
	// current one: while canaries await promotion the old version keeps
	// its count (canary.go).
	old *events.Job
}

// slot is something that holds a name index of a group: a kept
// allocation, a pending replacement, or a failed or complete allocation
// that is not replaced (yet).
type slot struct {
	index int
	rank  int // kept 0, replacement 1, held 2: the order survivors are chosen in
	// pref orders kept allocations of one index: current 0, outdated 1,
	// another deployment's canary 2 (the lowest survives a duplicate).
	pref int
	// outdated marks a kept allocation that must be replaced to run the
	// current version.
	outdated bool
	alloc    *events.Allocation
	need     *need
	// delayedAt, for a held failed allocation, is when it may be rescheduled.
	delayedAt int64
}

// computeGeneric reconciles a service or batch job group by group.
func (s *sched) computeGeneric() {
	if s.job.Type == events.JobTypeService {
		if d, ok := s.st.LatestDeployment(s.job.Namespace, s.job.ID); ok && d.JobVersion == s.job.Version && d.Active() {
			s.deploymentID = d.ID
		}
	}
	byGroup := map[string][]*events.Allocation{}
	for _, a := range s.allocs {
		byGroup[a.TaskGroup] = append(byGroup[a.TaskGroup], a)
	}
	// Allocations of groups the job no longer has.
	groups := map[string]bool{}
	for i := range s.job.TaskGroups {
		groups[s.job.TaskGroups[i].Name] = true
	}
	for _, a := range s.allocs {
		if !groups[a.TaskGroup] && !a.ServerTerminal() && !a.ClientTerminal() {
			cs := ""
			if nodeLost(s.nodes[a.NodeID]) {
				cs = events.AllocClientLost
			}
			s.stop(a, descGroupRemoved, cs)
		}
	}
	var needs [][]need
	for i := range s.job.TaskGroups {
		tg := &s.job.TaskGroups[i]
		needs = append(needs, s.reconcileGroup(tg, byGroup[tg.Name]))
	}
	// Stops are all decided: place.
	for i := range s.job.TaskGroups {
		s.placeGroup(&s.job.TaskGroups[i], needs[i])
	}
}

// reconcileGroup decides the stops and updates of one group and returns
// the allocations to place.
func (s *sched) reconcileGroup(tg *events.TaskGroup, allocs []*events.Allocation) []need {
	tolerates, lostAfter, replace := disconnect(tg)
	var timeouts []int64
	outdated := s.outdatedFunc(tg)
	cs := s.groupCanaries(tg, allocs)

	// Which allocations were replaced, by whom.
	successor := map[string]bool{}
	liveReplacement := map[string]*events.Allocation{}
	for _, a := range allocs {
		if a.PreviousAllocation != "" {
			successor[a.PreviousAllocation] = true
			if !a.Terminal() {
				liveReplacement[a.PreviousAllocation] = a
			}
		}
		if a.NextAllocation != "" {
			successor[a.ID] = true
		}
	}

	// Reconnects first: an allocation alive on a ready node that was
	// replaced while its node was disconnected keeps its place and the
	// replacement stops, or the other way round (disconnect.reconcile).
	keepReplacement := tg.Disconnect != nil && tg.Disconnect.Reconcile == "keep_replacement"
	for _, a := range allocs {
		r := liveReplacement[a.ID]
		if r == nil || a.Terminal() || s.stopped[a.ID] || s.stopped[r.ID] {
			continue
		}
		n := s.nodes[a.NodeID]
		if n == nil || n.Status != events.NodeStatusReady {
			continue
		}
		if keepReplacement {
			s.stop(a, descKeepReplacement, "")
		} else {
			s.stop(r, descReconnected, "")
		}
	}

	// replaced reports whether a has a replacement that keeps running.
	replaced := func(a *events.Allocation) bool {
		r := liveReplacement[a.ID]
		return r != nil && !s.stopped[r.ID]
	}
	var slots []slot
	for _, a := range allocs {
		if s.stopped[a.ID] || a.ServerTerminal() {
			continue
		}
		if cs.placed[a.ID] {
			// An unpromoted canary holds no slot: the allocations it
			// will replace keep theirs until promotion. One on a down or
			// disconnected node is lost, and another canary is placed.
			switch n := s.nodes[a.NodeID]; {
			case a.ClientTerminal():
			case nodeLost(n):
				s.stop(a, descLost, events.AllocClientLost)
			case n.Status == events.NodeStatusDisconnected:
				s.stop(a, descLostDisconnect, events.AllocClientLost)
			default:
				cs.live = append(cs.live, a)
			}
			continue
		}
		idx := nameIndex(a.Name)
		n := s.nodes[a.NodeID]
		if a.ClientTerminal() {
			if successor[a.ID] {
				continue
			}
			switch a.ClientStatus {
			case events.AllocClientComplete:
				if s.job.Type == events.JobTypeBatch {
					slots = append(slots, slot{index: idx, rank: 2, alloc: a})
				}
			case events.AllocClientFailed:
				ok, at, _ := rescheduleAt(a, tg.ReschedulePolicy)
				switch {
				case !ok:
					// Out of attempts: the slot stays failed.
					slots = append(slots, slot{index: idx, rank: 2, alloc: a})
				case at <= s.now:
					slots = append(slots, slot{index: idx, rank: 1, need: &need{index: idx, prev: a, resched: true}})
				default:
					slots = append(slots, slot{index: idx, rank: 2, alloc: a, delayedAt: at})
				}
			case events.AllocClientLost:
				slots = append(slots, slot{index: idx, rank: 1, need: &need{index: idx, prev: a}})
			}
			continue
		}
		switch {
		case nodeLost(n) || (n.Status == events.NodeStatusDisconnected && (!tolerates || s.lostExpired(n, lostAfter))):
			desc := descLost
			if n != nil && n.Status == events.NodeStatusDisconnected {
				desc = descLostDisconnect
				if tolerates {
					desc = descLostAfter
				}
			}
			s.stop(a, desc, events.AllocClientLost)
			if !replaced(a) {
				slots = append(slots, slot{index: idx, rank: 1, need: &need{index: idx, prev: a}})
			}
		case n.Status == events.NodeStatusDisconnected:
			s.markUnknown(a, n, lostAfter, &timeouts)
			switch {
			case replaced(a):
				// Its replacement holds the slot.
			case replace:
				slots = append(slots, slot{index: idx, rank: 1, need: &need{index: idx, prev: a}})
			default:
				slots = append(slots, slot{index: idx, rank: 0, alloc: a})
			}
		case replaced(a):
			// Reconnecting (initializing, N1): its replacement holds the
			// slot until the node is ready and the reconnect is decided.
		case isTrue(a.DesiredTransition.Migrate):
			if !replaced(a) {
				slots = append(slots, slot{index: idx, rank: 1, need: &need{index: idx, prev: a, stopPrev: descMigrate}})
			} else {
				s.stop(a, descMigrate, "")
			}
		default:
			sl := slot{index: idx, rank: 0, outdated: outdated(a), alloc: a}
			switch {
			case cs.foreign(a):
				sl.pref = 2
			case sl.outdated:
				sl.pref = 1
			}
			slots = append(slots, sl)
		}
	}

	// Keep the lowest indexes up to count; what is above goes (scale down
	// stops the highest indexes first). Of two allocations with one index
	// the current one stays (a promoted canary and the one it replaces).
	slices.SortStableFunc(slots, func(x, y slot) int {
		if c := cmp.Compare(x.index, y.index); c != 0 {
			return c
		}
		if c := cmp.Compare(x.rank, y.rank); c != 0 {
			return c
		}
		return cmp.Compare(x.pref, y.pref)
	})
	used := map[int]bool{}
	var keep []slot
	for _, sl := range slots {
		if len(keep) >= tg.Count || (sl.index >= 0 && used[sl.index]) {
			switch {
			case sl.alloc != nil && sl.rank == 0:
				desc := descScaleDown
				if used[sl.index] && len(keep) < tg.Count && sl.pref == 0 {
					desc = descDuplicate
				}
				s.stop(sl.alloc, desc, "")
			case sl.need != nil && sl.need.stopPrev != "":
				// A migration no longer needed: just stop.
				s.stop(sl.need.prev, sl.need.stopPrev, "")
			}
			continue
		}
		used[sl.index] = true
		keep = append(keep, sl)
	}

	var needs []need
	var delayed []*events.Allocation
	var delayedAt []int64
	var old []*events.Allocation
	for _, sl := range keep {
		switch {
		case sl.need != nil:
			needs = append(needs, *sl.need)
		case sl.delayedAt > 0:
			if sl.alloc.FollowupEvalID == "" {
				delayed = append(delayed, sl.alloc)
				delayedAt = append(delayedAt, sl.delayedAt)
			}
		case sl.rank == 0 && sl.outdated:
			old = append(old, sl.alloc)
		}
	}
	for i := 0; len(keep) < tg.Count; i++ {
		if !used[i] {
			used[i] = true
			keep = append(keep, slot{index: i})
			needs = append(needs, need{index: i})
		}
	}
	s.delayReschedules(delayed, delayedAt)
	s.addTimeoutFollowUps(timeouts)
	if cs.canarying(old) {
		// No destructive progress before promotion: place the canaries
		// still missing, and keep the old version's count with the old
		// version.
		s.downgrade(tg, needs, old, outdated)
		return append(needs, s.placeCanaries(tg, cs, old, used)...)
	}
	return append(needs, s.destructiveUpdates(tg, allocs, old)...)
}

func isTrue(b *bool) bool { return b != nil && *b }

// outdatedFunc returns a function that reports whether an allocation runs
// an earlier version of the job whose group differs in what its tasks run,
// so it must be replaced rather than updated in place. Unknown earlier
// versions count as compatible. Answers are remembered per version.
func (s *sched) outdatedFunc(tg *events.TaskGroup) func(*events.Allocation) bool {
	seen := map[uint64]bool{}
	return func(a *events.Allocation) bool {
		if a.JobVersion == s.job.Version {
			return false
		}
		if d, ok := seen[a.JobVersion]; ok {
			return d
		}
		d := false
		if old, ok := s.st.JobVersion(s.job.Namespace, s.job.ID, a.JobVersion); ok {
			d = GroupChanged(old, s.job, tg.Name)
		}
		seen[a.JobVersion] = d
		return d
	}
}

// destructive reports whether a must be replaced to run the job's current
// version of tg (see outdatedFunc).
func (s *sched) destructive(tg *events.TaskGroup, a *events.Allocation) bool {
	return s.outdatedFunc(tg)(a)
}

// GroupChanged reports whether group name of job version cur differs from
// its form in version old in what its tasks run (tasks, or the meta they
// see), so that an allocation of old must be replaced rather than updated
// in place. A group old lacks is changed.
func GroupChanged(old, cur *events.Job, name string) bool {
	og, cg := group(old, name), group(cur, name)
	if og == nil || cg == nil {
		return og != cg
	}
	if len(og.Tasks) != len(cg.Tasks) {
		return true
	}
	if (len(og.Networks) > 0 || len(cg.Networks) > 0) && !reflect.DeepEqual(og.Networks, cg.Networks) {
		return true // new ports: the allocation must be placed again
	}
	for i := range cg.Tasks {
		ot, ct := og.Tasks[i], cg.Tasks[i]
		if !maps.Equal(taskMeta(old, og, &ot), taskMeta(cur, cg, &ct)) {
			return true
		}
		ot.Meta, ct.Meta = nil, nil // compared merged, above
		if !reflect.DeepEqual(ot, ct) {
			return true
		}
	}
	return false
}

// taskMeta returns the meta task t of group tg of job sees, as Nomad
// merges it (job, then group, then task; the innermost wins): the client
// sets it in the task's environment as NOMAD_META_*, so a change in it at
// any level replaces the allocation, as Nomad's does.
func taskMeta(job *events.Job, tg *events.TaskGroup, t *events.Task) map[string]string {
	out := maps.Clone(job.Meta)
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, tg.Meta)
	maps.Copy(out, t.Meta)
	return out
}

// group returns job's group name, nil if it has none.
func group(job *events.Job, name string) *events.TaskGroup {
	if job == nil {
		return nil
	}
	for i := range job.TaskGroups {
		if job.TaskGroups[i].Name == name {
			return &job.TaskGroups[i]
		}
	}
	return nil
}

// destructiveUpdates replaces outdated allocations, at most the update
// strategy's max_parallel at a time for a service job (counting new
// allocations not yet healthy), under a deployment.
func (s *sched) destructiveUpdates(tg *events.TaskGroup, allocs, outdated []*events.Allocation) []need {
	if len(outdated) == 0 {
		return nil
	}
	limit := len(outdated)
	if s.job.Type == events.JobTypeService && tg.Update != nil && tg.Update.MaxParallel > 0 {
		d := s.deployment()
		if d == nil {
			return nil // paused or failed: no progress
		}
		inFlight := 0
		for _, a := range allocs {
			if a.JobVersion == s.job.Version && !a.Terminal() && !s.stopped[a.ID] &&
				(a.DeploymentStatus == nil || !isTrue(a.DeploymentStatus.Healthy)) {
				inFlight++
			}
		}
		limit = max(0, tg.Update.MaxParallel-inFlight)
		if st := d.TaskGroups[tg.Name]; st != nil && s.plan.Deployment == d {
			st.DesiredTotal = tg.Count
		}
	}
	var out []need
	for _, a := range outdated[:min(limit, len(outdated))] {
		out = append(out, need{index: nameIndex(a.Name), prev: a, stopPrev: descUpdate, destructive: true})
	}
	return out
}

// deployment returns the job version's active deployment, creating one in
// the plan if there is none; nil when the latest one for this version is
// paused, failed or otherwise finished.
func (s *sched) deployment() *events.Deployment {
	if s.plan.Deployment != nil {
		return s.plan.Deployment
	}
	if d, ok := s.st.LatestDeployment(s.job.Namespace, s.job.ID); ok && d.JobVersion == s.job.Version {
		if d.Active() && d.Status != events.DeploymentStatusPaused {
			s.deploymentID = d.ID
			return d
		}
		return nil
	}
	d := &events.Deployment{
		ID: DeriveID(s.eval.ID, "deployment", 0), Namespace: s.job.Namespace, JobID: s.job.ID,
		JobVersion: s.job.Version, JobModifyIndex: s.eval.JobModifyIndex, JobSpecModifyIndex: s.eval.JobModifyIndex,
		Status: events.DeploymentStatusRunning, StatusDescription: "Deployment is running",
		TaskGroups: map[string]*events.DeploymentState{},
	}
	for i := range s.job.TaskGroups {
		g := &s.job.TaskGroups[i]
		st := &events.DeploymentState{DesiredTotal: g.Count}
		if g.Update != nil {
			st.AutoRevert, st.ProgressDeadline = g.Update.AutoRevert, g.Update.ProgressDeadline
		}
		d.TaskGroups[g.Name] = st
	}
	s.plan.Deployment = d
	s.deploymentID = d.ID
	return d
}

// delayReschedules creates follow-up evals for failed allocations whose
// reschedule delay has not passed, one per batch of close times, and links
// each allocation to its eval.
func (s *sched) delayReschedules(allocs []*events.Allocation, at []int64) {
	if len(allocs) == 0 {
		return
	}
	order := make([]int, len(allocs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(x, y int) int { return cmp.Compare(at[x], at[y]) })
	for i := 0; i < len(order); {
		j := i
		for j < len(order) && at[order[j]] <= at[order[i]]+followUpBatch {
			j++
		}
		id := s.addFollowUp(events.EvalTriggerRetryFailedAlloc, at[order[j-1]])
		for _, k := range order[i:j] {
			s.plan.Updates = append(s.plan.Updates, events.AllocDesiredUpdate{ID: allocs[k].ID, FollowupEvalID: id})
		}
		i = j
	}
}

// placeGroup places a group's needs, replacements first, by index.
func (s *sched) placeGroup(tg *events.TaskGroup, needs []need) {
	slices.SortStableFunc(needs, func(x, y need) int {
		if (x.prev == nil) != (y.prev == nil) {
			if x.prev != nil {
				return -1
			}
			return 1
		}
		return cmp.Compare(x.index, y.index)
	})
	res := groupResources(tg)
	for _, nd := range needs {
		if _, failed := s.plan.FailedTGAllocs[tg.Name]; failed {
			s.failed(tg.Name, nil)
			continue
		}
		avoid := ""
		if nd.resched {
			avoid = nd.prev.NodeID
		}
		r, nets := res, tg.Networks
		var og *events.TaskGroup
		if nd.old != nil {
			og = group(nd.old, tg.Name)
			r, nets = groupResources(og), og.Networks
		}
		name := allocName(s.job.ID, tg.Name, nd.index)
		// A replacement may take the ports of the allocation it stops
		// (ports.go): they are free while its node is chosen.
		var prevPorts []int
		if p := nd.prev; p != nil && nd.stopPrev != "" && !p.Terminal() && !s.stopped[p.ID] {
			prevPorts = allocs.HostPorts(p)
			s.movePorts(p.NodeID, prevPorts, -1)
		}
		n, ports, m := s.selectNode(tg, r, nets, avoid, nd.index, name)
		if len(prevPorts) > 0 {
			s.movePorts(nd.prev.NodeID, prevPorts, 1) // stop, below, frees them for good
		}
		if n == nil {
			s.failed(tg.Name, m)
			continue
		}
		a := s.newAlloc(tg, name)
		if og != nil {
			a.JobVersion, a.Resources = nd.old.Version, r
		}
		a.AllocatedResources = ports
		a.Metrics = m
		a.DeploymentID = s.deploymentID
		if nd.canary {
			a.DeploymentStatus = &events.AllocDeploymentStatus{Canary: true}
			s.recordCanary(tg, a.ID)
		}
		if p := nd.prev; p != nil {
			a.PreviousAllocation = p.ID
			if nd.resched {
				a.RescheduleEvents = append(slices.Clone(p.RescheduleEvents), events.RescheduleEvent{
					RescheduleTime: s.now, PrevAllocID: p.ID, PrevNodeID: p.NodeID, Delay: rescheduleDelay(p, tg.ReschedulePolicy)})
			}
			if nd.stopPrev != "" {
				s.stop(p, nd.stopPrev, "")
			}
		}
		if d := s.plan.Deployment; d != nil && a.DeploymentID == d.ID {
			if st := d.TaskGroups[tg.Name]; st != nil {
				st.PlacedAllocs++
			}
		}
		s.place(a, n)
	}
}
