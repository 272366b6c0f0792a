package jobplan

import (
	"bytes"
	"errors"
	"fmt"
	"time"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/job"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/processors/periodic"
	"github.com/ordoplane/ordo/processors/schedstate"
	"github.com/ordoplane/ordo/processors/scheduler"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/jobs"
	"github.com/ordoplane/ordo/projections/namespaces"
)

// Options tunes a plan.
type Options struct {
	// Diff asks for a field-level diff of the job against the registered one.
	Diff bool
	// Now is the time the synthetic eval is stamped with (the scheduler
	// uses it for reschedule and disconnect deadlines).
	Now time.Time
}

// Response is Nomad's JobPlanResponse, as far as ordo has it.
type Response struct {
	// Index is the job's current JobModifyIndex (0 for a new job), for
	// `job run -check-index`; JobModifyIndex is the same, Nomad's name.
	Index          uint64
	JobModifyIndex uint64
	// Annotations count, per task group, what the scheduler would do.
	Annotations *Annotations
	// FailedTGAllocs explains, per task group, placements that would fail.
	FailedTGAllocs map[string]*events.AllocMetric
	// CreatedEvals are the evals the registration's eval would create:
	// the blocked eval and delayed follow-ups.
	CreatedEvals []*events.Evaluation
	// Diff is the job's diff against the registered version; nil unless asked.
	Diff *JobDiff
	// NextPeriodicLaunch is a periodic job's next launch; zero otherwise.
	NextPeriodicLaunch time.Time
	Warnings           string
}

// Annotations is Nomad's PlanAnnotations.
type Annotations struct {
	DesiredTGUpdates map[string]*DesiredUpdates
	PreemptedAllocs  []any
}

// DesiredUpdates is Nomad's DesiredUpdates: counts of allocations by what
// the scheduler would do with them.
type DesiredUpdates struct {
	Ignore            uint64
	Place             uint64
	Migrate           uint64
	Stop              uint64
	InPlaceUpdate     uint64
	DestructiveUpdate uint64
	Canary            uint64
	Preemptions       uint64
}

// Changes reports whether allocations would be created or destroyed
// (Nomad's `job plan` exits 1 then).
func (a *Annotations) Changes() bool {
	if a == nil {
		return false
	}
	for _, u := range a.DesiredTGUpdates {
		if u.Place+u.Stop+u.Migrate+u.DestructiveUpdate+u.Canary > 0 {
			return true
		}
	}
	return false
}

// Plan computes what registering spec would do on the state v reflects.
// An invalid spec is a *commands.ValidationError, as a registration's.
func Plan(v projections.View, spec *events.Job, opts Options) (*Response, error) {
	if spec == nil {
		return nil, commands.Invalid("Job", "missing")
	}
	reg := &job.Register{Job: *spec, Management: true} // a plan registers nothing: RejectJobRegistration does not apply
	if err := reg.Validate(); err != nil {
		return nil, err
	}
	newJob := reg.Job
	if newJob.Namespace != namespaces.Default {
		if _, err := namespaces.Get(v, newJob.Namespace); errors.Is(err, projections.ErrNotFound) {
			return nil, commands.Invalid("job.namespace", "namespace %q does not exist", newJob.Namespace)
		} else if err != nil {
			return nil, err
		}
	}
	old, err := jobs.Get(v, newJob.Namespace, newJob.ID)
	switch {
	case errors.Is(err, projections.ErrNotFound):
		old = nil
	case err != nil:
		return nil, err
	}
	newJob.Stop, newJob.SubmitTime = false, opts.Now.UnixNano()
	resp := &Response{Annotations: &Annotations{DesiredTGUpdates: map[string]*DesiredUpdates{}}}
	var oldJob *events.Job
	if old != nil {
		oldJob = &old.Job
		resp.Index, resp.JobModifyIndex = old.JobModifyIndex, old.JobModifyIndex
		changed, err := specChanged(oldJob, &newJob)
		if err != nil {
			return nil, err
		}
		newJob.Version = old.Version
		if changed {
			newJob.Version++
		}
	}

	switch {
	case jobs.Periodic(&newJob):
		next, err := periodic.Next(newJob.Periodic, opts.Now)
		if err != nil {
			resp.Warnings = err.Error()
		}
		resp.NextPeriodicLaunch = next
	case jobs.Parameterized(&newJob):
		// Launched only by dispatch: registering it places nothing.
	default:
		if err := schedule(v, &newJob, resp, opts.Now); err != nil {
			return nil, err
		}
	}
	if opts.Diff {
		resp.Diff = Diff(oldJob, &newJob, resp.Annotations.DesiredTGUpdates)
	}
	return resp, nil
}

// schedule runs the scheduler on a synthetic eval of job over v with job
// overlaid, and describes the plan in resp.
func schedule(v projections.View, newJob *events.Job, resp *Response, now time.Time) error {
	base, err := schedstate.New(v)
	if err != nil {
		return err
	}
	st := schedstate.JobOverlay{State: base, NewJob: newJob}
	seed := fmt.Sprintf("plan\x00%s\x00%s", newJob.Namespace, newJob.ID)
	eval := &events.Evaluation{
		ID: scheduler.DeriveID(seed, "eval", int(base.Index())), Namespace: newJob.Namespace,
		Priority: newJob.Priority, Type: newJob.Type, TriggeredBy: events.EvalTriggerJobRegister,
		JobID: newJob.ID, JobModifyIndex: resp.JobModifyIndex, Status: events.EvalStatusPending,
		CreateTime: now.UnixNano(), ModifyTime: now.UnixNano(),
	}
	plan, err := scheduler.Compute(st, eval)
	if err != nil {
		return fmt.Errorf("plan job %q: %w", newJob.ID, err)
	}
	if err := base.Err(); err != nil {
		return fmt.Errorf("plan job %q: read state: %w", newJob.ID, err)
	}
	resp.Annotations.DesiredTGUpdates = annotate(st, newJob, plan)
	if len(plan.FailedTGAllocs) > 0 {
		resp.FailedTGAllocs = plan.FailedTGAllocs
	}
	if plan.CreateBlockedEval {
		resp.CreatedEvals = append(resp.CreatedEvals, &events.Evaluation{
			ID: scheduler.DeriveID(eval.ID, "blocked", 0), Namespace: eval.Namespace, Priority: eval.Priority,
			Type: eval.Type, TriggeredBy: events.EvalTriggerQueuedAllocs, JobID: eval.JobID,
			JobModifyIndex: eval.JobModifyIndex, Status: events.EvalStatusBlocked, PreviousEval: eval.ID,
			ClassEligibility: plan.ClassEligibility, EscapedComputedClass: plan.EscapedComputedClass,
			CreateTime: eval.CreateTime, ModifyTime: eval.ModifyTime,
		})
	}
	for i := range plan.FollowUps {
		resp.CreatedEvals = append(resp.CreatedEvals, &plan.FollowUps[i])
	}
	return nil
}

// annotate counts, per task group, what plan does to the job's allocations
// and what it leaves: new placements (made or failed) and replacements of
// lost or failed allocations are Place (the lost ones also Stop); replacements of
// allocations being migrated are Migrate and of outdated ones
// DestructiveUpdate; other stops are Stop. Live allocations left alone
// are Ignore when at the job's version, otherwise DestructiveUpdate when
// their tasks changed (replaced later, max_parallel at a time) or
// InPlaceUpdate.
func annotate(st scheduler.State, newJob *events.Job, plan *scheduler.Plan) map[string]*DesiredUpdates {
	out := map[string]*DesiredUpdates{}
	group := func(name string) *DesiredUpdates {
		if out[name] == nil {
			out[name] = &DesiredUpdates{}
		}
		return out[name]
	}
	for i := range newJob.TaskGroups {
		group(newJob.TaskGroups[i].Name)
	}
	byID := map[string]*events.Allocation{}
	for _, a := range st.AllocsByJob(newJob.Namespace, newJob.ID) {
		byID[a.ID] = a
	}
	stops := map[string]events.AllocDesiredUpdate{}
	for _, s := range plan.Stops {
		stops[s.ID] = s
	}
	replaced := map[string]bool{}
	for i := range plan.Placements {
		p := &plan.Placements[i]
		g := group(p.TaskGroup)
		prev := byID[p.PreviousAllocation]
		stop, stopped := stops[p.PreviousAllocation]
		switch {
		case prev == nil || prev.Terminal() || !stopped || stop.ClientStatus != "":
			g.Place++
		case prev.DesiredTransition.Migrate != nil && *prev.DesiredTransition.Migrate:
			g.Migrate++
			replaced[prev.ID] = true
		default:
			g.DestructiveUpdate++
			replaced[prev.ID] = true
		}
	}
	// Placements that failed are still wanted (Nomad counts them too, and
	// FailedTGAllocs says why they failed).
	for name, n := range plan.QueuedAllocations {
		group(name).Place += uint64(n)
	}
	for _, s := range plan.Stops {
		if replaced[s.ID] {
			continue
		}
		name := ""
		if a := byID[s.ID]; a != nil {
			name = a.TaskGroup
		}
		group(name).Stop++
	}
	groups := map[string]*events.TaskGroup{}
	for i := range newJob.TaskGroups {
		groups[newJob.TaskGroups[i].Name] = &newJob.TaskGroups[i]
	}
	for _, a := range byID {
		tg := groups[a.TaskGroup]
		if tg == nil || a.Terminal() {
			continue
		}
		if _, ok := stops[a.ID]; ok {
			continue
		}
		g := group(a.TaskGroup)
		switch {
		case a.JobVersion == newJob.Version:
			g.Ignore++
		case destructive(st, newJob, tg, a.JobVersion):
			g.DestructiveUpdate++
		default:
			g.InPlaceUpdate++
		}
	}
	return out
}

// destructive reports whether group tg of newJob runs different tasks
// (or tasks that see different meta) than version v of the job did, as
// the scheduler decides it.
func destructive(st scheduler.State, newJob *events.Job, tg *events.TaskGroup, v uint64) bool {
	old, ok := st.JobVersion(newJob.Namespace, newJob.ID, v)
	return ok && scheduler.GroupChanged(old, newJob, tg.Name)
}

// specChanged reports whether b's spec differs from a's, as a
// registration decides it: canonical encodings without Version and
// SubmitTime (re-registering a stopped job changes it).
func specChanged(a, b *events.Job) (bool, error) {
	enc := func(j events.Job) ([]byte, error) {
		j.Version, j.SubmitTime = 0, 0
		return events.Marshal(&j)
	}
	ea, err := enc(*a)
	if err != nil {
		return false, err
	}
	eb, err := enc(*b)
	if err != nil {
		return false, err
	}
	return !bytes.Equal(ea, eb), nil
}
