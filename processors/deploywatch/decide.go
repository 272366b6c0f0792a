package deploywatch

import (
	"reflect"
	"slices"
	"sort"
	"time"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/processors/scheduler"
)

// Status descriptions, as Nomad words them.
const (
	DescriptionRunning           = "Deployment is running"
	DescriptionNeedsPromotion    = "Deployment is running but requires manual promotion"
	DescriptionAutoPromotion     = "Deployment is running pending automatic promotion"
	DescriptionSuccessful        = "Deployment completed successfully"
	DescriptionStoppedJob        = "Cancelled because job is stopped"
	DescriptionNewerJob          = "Cancelled due to newer version of job"
	DescriptionFailedAllocations = "Failed due to unhealthy allocations"
	DescriptionProgressDeadline  = "Failed due to progress deadline"
)

// The outcomes of a decision, as metrics and logs name them.
const (
	OutcomeNone       = ""
	OutcomeRunning    = "running"
	OutcomeProgress   = "progress"
	OutcomePromoted   = "promoted"
	OutcomeSuccessful = "successful"
	OutcomeFailed     = "failed"
	OutcomeCancelled  = "cancelled"
)

// Input is what the watcher decides on about one deployment, read from
// one snapshot of the projections.
type Input struct {
	// Deployment is the deployment as stored.
	Deployment events.Deployment
	// Job is the job's current version; nil when the job is gone.
	Job *events.Job
	// Versions are the job's versions kept: the deployment's and those its
	// allocations run (an allocation of a version not kept counts as
	// compatible, as in the scheduler).
	Versions map[uint64]*events.Job
	// Allocs are the job's allocations, terminal ones included.
	Allocs []*events.Allocation
}

// Decision is what the watcher does about one deployment.
type Decision struct {
	// Deployment is the deployment's new state, whole; nil when nothing
	// changes.
	Deployment *events.Deployment
	// Eval asks for an eval of the job so the scheduler goes on.
	Eval bool
	// Revert asks for the job's latest stable version to be registered
	// again with the failure (auto_revert).
	Revert bool
	// Outcome names the decision; OutcomeNone when nothing changes.
	Outcome string
	// Deadline is the earliest progress deadline the deployment still
	// runs against once the decision is recorded; zero when none.
	Deadline time.Time
}

// groupView is what Decide counts for one group.
type groupView struct {
	name    string
	update  *events.UpdateStrategy
	healthy int // live healthy allocations compatible with the deployment's version
	// canariesHealthy counts the live healthy canaries.
	canariesHealthy int
}

// Decide decides what becomes of an active deployment at now (the
// watcher's clock), Nomad's way:
//
//   - A deployment still initializing is left to its move to pending
//     (N3); a pending one is now watched, so running. One whose job is
//     gone is left alone.
//   - It is cancelled when its job is stopped or has a newer version.
//   - Per group it counts PlacedAllocs (allocations placed under it),
//     HealthyAllocs (live allocations reported healthy that run its
//     version, or an earlier version its group does not differ from) and
//     UnhealthyAllocs (its allocations reported unhealthy), adds canaries
//     flagged on its allocations to PlacedCanaries, and with a
//     progress_deadline sets RequireProgressBy to now + the deadline when
//     it starts and whenever HealthyAllocs grows.
//   - It fails at the first unhealthy allocation, or when a group that is
//     not done passes RequireProgressBy (unless its canaries are all
//     healthy and wait for promotion), and not while paused. It asks for
//     a revert when a failing group has auto_revert.
//   - It succeeds, when not paused, once every group has DesiredTotal
//     healthy allocations and, if it placed canaries, is promoted.
//   - It promotes by itself, when not paused, once every group waiting
//     for promotion has auto_promote and all its canaries healthy.
//   - It asks for an eval when allocations became healthy (the scheduler
//     may go on), on auto-promotion and on failure without revert.
func Decide(in Input, now time.Time) Decision {
	d := &in.Deployment
	if !d.Active() || d.Status == events.DeploymentStatusInitializing || in.Job == nil {
		return Decision{}
	}
	nd := clone(d)
	switch {
	case in.Job.Stop:
		return cancel(nd, DescriptionStoppedJob)
	case in.Job.Version != d.JobVersion:
		return cancel(nd, DescriptionNewerJob)
	}
	version := in.Versions[d.JobVersion]
	if version == nil {
		version = in.Job
	}
	paused := d.Status == events.DeploymentStatusPaused
	if d.Status == events.DeploymentStatusPending {
		nd.Status, nd.StatusDescription = events.DeploymentStatusRunning, DescriptionRunning
	}

	names := make([]string, 0, len(nd.TaskGroups))
	for name, st := range nd.TaskGroups {
		if st != nil {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	var (
		views      []groupView
		progressed bool
		unhealthy  bool
		revert     bool
	)
	for _, name := range names {
		st := nd.TaskGroups[name]
		g := count(in, d, version, name, st)
		views = append(views, g)
		if g.update != nil && g.update.ProgressDeadline > 0 {
			if st.RequireProgressBy == 0 || g.healthy > d.TaskGroups[name].HealthyAllocs {
				st.RequireProgressBy = now.Add(g.update.ProgressDeadline).UnixNano()
			}
		}
		if g.healthy > d.TaskGroups[name].HealthyAllocs {
			progressed = true
		}
		if st.UnhealthyAllocs > 0 {
			unhealthy = true
			revert = revert || autoRevert(st, g.update)
		}
	}

	var dec Decision
	switch {
	case unhealthy:
		dec = fail(nd, DescriptionFailedAllocations, revert)
	case !paused && deadlinePassed(nd, views, now, &revert):
		dec = fail(nd, DescriptionProgressDeadline, revert)
	case !paused && allDone(nd, views):
		nd.Status, nd.StatusDescription = events.DeploymentStatusSuccessful, DescriptionSuccessful
		dec = Decision{Deployment: nd, Outcome: OutcomeSuccessful}
	case !paused && autoPromote(nd, views, now):
		nd.StatusDescription = DescriptionRunning
		dec = Decision{Deployment: nd, Eval: true, Outcome: OutcomePromoted}
	default:
		if !paused {
			nd.StatusDescription = runningDescription(nd, views, nd.StatusDescription)
		}
		dec = Decision{Deployment: nd, Eval: progressed}
		switch {
		case d.Status != nd.Status:
			dec.Outcome = OutcomeRunning
		case !reflect.DeepEqual(d, nd):
			dec.Outcome = OutcomeProgress
		default:
			dec = Decision{}
		}
	}
	dec.Deadline = nextDeadline(nd, views)
	return dec
}

// count counts group name's allocations for deployment d (version is the
// job version it rolls out) into st, and returns what else it saw.
func count(in Input, d *events.Deployment, version *events.Job, name string, st *events.DeploymentState) groupView {
	g := groupView{name: name}
	if tg := group(version, name); tg != nil {
		g.update = tg.Update
	}
	canaries := map[string]bool{}
	for _, id := range st.PlacedCanaries {
		canaries[id] = true
	}
	var flagged []string
	placed, unhealthy := 0, 0
	for _, a := range in.Allocs {
		if a.TaskGroup != name {
			continue
		}
		ds := a.DeploymentStatus
		mine := a.DeploymentID == d.ID
		if mine {
			placed++
			if ds != nil && ds.Canary && !canaries[a.ID] {
				canaries[a.ID] = true
				flagged = append(flagged, a.ID)
			}
			if ds != nil && ds.Healthy != nil && !*ds.Healthy {
				unhealthy++
			}
		}
		if a.Terminal() || ds == nil || ds.Healthy == nil || !*ds.Healthy {
			continue
		}
		if canaries[a.ID] {
			g.canariesHealthy++
		}
		if a.JobVersion == d.JobVersion || !changed(in.Versions[a.JobVersion], version, name) {
			g.healthy++
		}
	}
	sort.Strings(flagged)
	st.PlacedCanaries = append(st.PlacedCanaries, flagged...)
	st.PlacedAllocs, st.HealthyAllocs, st.UnhealthyAllocs = placed, g.healthy, unhealthy
	return g
}

// changed reports whether an allocation of version old must be replaced
// to run version cur; a version not kept is compatible.
func changed(old, cur *events.Job, name string) bool {
	return old != nil && scheduler.GroupChanged(old, cur, name)
}

func autoRevert(st *events.DeploymentState, u *events.UpdateStrategy) bool {
	return st.AutoRevert || (u != nil && u.AutoRevert)
}

// waitsForPromotion reports whether a group placed canaries and is not
// promoted.
func waitsForPromotion(st *events.DeploymentState) bool {
	return st.DesiredCanaries > 0 && !st.Promoted && len(st.PlacedCanaries) > 0
}

// done reports whether a group has all it wants healthy, promoted if it
// placed canaries.
func done(st *events.DeploymentState) bool {
	return st.HealthyAllocs >= st.DesiredTotal && !waitsForPromotion(st)
}

func allDone(d *events.Deployment, views []groupView) bool {
	for _, g := range views {
		if !done(d.TaskGroups[g.name]) {
			return false
		}
	}
	return true
}

// canariesReady reports whether a group waiting for promotion has all the
// canaries it asks for healthy.
func canariesReady(st *events.DeploymentState, g groupView) bool {
	return waitsForPromotion(st) && g.canariesHealthy >= st.DesiredCanaries
}

// deadlinePassed reports whether a group not done has passed its progress
// deadline (one whose canaries are ready for promotion waits), and sets
// *revert when such a group has auto_revert.
func deadlinePassed(d *events.Deployment, views []groupView, now time.Time, revert *bool) bool {
	passed := false
	for _, g := range views {
		st := d.TaskGroups[g.name]
		if done(st) || canariesReady(st, g) || st.RequireProgressBy == 0 || now.UnixNano() < st.RequireProgressBy {
			continue
		}
		passed = true
		*revert = *revert || autoRevert(st, g.update)
	}
	return passed
}

// autoPromote promotes every group waiting for promotion when all of them
// have auto_promote and all their canaries healthy.
func autoPromote(d *events.Deployment, views []groupView, now time.Time) bool {
	var ready []groupView
	for _, g := range views {
		st := d.TaskGroups[g.name]
		if !waitsForPromotion(st) {
			continue
		}
		if g.update == nil || !g.update.AutoPromote || !canariesReady(st, g) {
			return false
		}
		ready = append(ready, g)
	}
	for _, g := range ready {
		st := d.TaskGroups[g.name]
		st.Promoted = true
		if g.update.ProgressDeadline > 0 {
			st.RequireProgressBy = now.Add(g.update.ProgressDeadline).UnixNano()
		}
	}
	return len(ready) > 0
}

// runningDescription says what a running deployment waits for.
func runningDescription(d *events.Deployment, views []groupView, current string) string {
	if d.Status != events.DeploymentStatusRunning {
		return current
	}
	auto, manual := false, false
	for _, g := range views {
		if st := d.TaskGroups[g.name]; waitsForPromotion(st) {
			if g.update != nil && g.update.AutoPromote {
				auto = true
			} else {
				manual = true
			}
		}
	}
	switch {
	case manual:
		return DescriptionNeedsPromotion
	case auto:
		return DescriptionAutoPromotion
	case current == DescriptionNeedsPromotion || current == DescriptionAutoPromotion || current == "":
		return DescriptionRunning
	}
	return current
}

// nextDeadline returns the earliest progress deadline of a group not done
// (nor waiting on promotion with its canaries ready) of an active
// deployment that is not paused.
func nextDeadline(d *events.Deployment, views []groupView) time.Time {
	if !d.Active() || d.Status == events.DeploymentStatusPaused {
		return time.Time{}
	}
	var next int64
	for _, g := range views {
		st := d.TaskGroups[g.name]
		if done(st) || canariesReady(st, g) || st.RequireProgressBy == 0 {
			continue
		}
		if next == 0 || st.RequireProgressBy < next {
			next = st.RequireProgressBy
		}
	}
	if next == 0 {
		return time.Time{}
	}
	return time.Unix(0, next)
}

func cancel(d *events.Deployment, desc string) Decision {
	d.Status, d.StatusDescription = events.DeploymentStatusCancelled, desc
	return Decision{Deployment: d, Outcome: OutcomeCancelled}
}

// fail fails d; without a revert an eval lets the scheduler stop what the
// failed deployment left (its unpromoted canaries).
func fail(d *events.Deployment, desc string, revert bool) Decision {
	d.Status, d.StatusDescription = events.DeploymentStatusFailed, desc
	return Decision{Deployment: d, Revert: revert, Eval: !revert, Outcome: OutcomeFailed}
}

// group returns job's group name, nil if none.
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

// clone returns a deep copy of d.
func clone(d *events.Deployment) *events.Deployment {
	c := *d
	if d.TaskGroups != nil {
		c.TaskGroups = make(map[string]*events.DeploymentState, len(d.TaskGroups))
		for name, st := range d.TaskGroups {
			if st == nil {
				c.TaskGroups[name] = nil
				continue
			}
			cp := *st
			cp.PlacedCanaries = slices.Clone(st.PlacedCanaries)
			c.TaskGroups[name] = &cp
		}
	}
	return &c
}
