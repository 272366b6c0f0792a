package job

import (
	"fmt"
	"time"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/namespace"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/jobs"
)

// PeriodicChildPrefix is what the id of every child a periodic job
// launched starts with, after the parent's id.
const PeriodicChildPrefix = "/periodic-"

// PeriodicChildID returns the id of the child periodic job parent launches
// at launch: "<parent>/periodic-<unix seconds>", as Nomad names it.
func PeriodicChildID(parent string, launch time.Time) string {
	return fmt.Sprintf("%s%s%d", parent, PeriodicChildPrefix, launch.Unix())
}

// LaunchPeriodic launches a periodic job once: it registers a child job
// "<parent>/periodic-<unix seconds>", a copy of the parent with Periodic
// cleared and ParentID set, and an evaluation of it. The periodic launcher
// issues it at each launch time; POST /v1/job/:id/periodic/force issues it
// with Force.
type LaunchPeriodic struct {
	Namespace string
	ID        string
	// Launch is the launch time the child is named for; zero takes the
	// leader time (a forced launch).
	Launch time.Time
	// Force launches even when the parent prohibits overlap and a child is
	// still pending or running, as Nomad's periodic force does.
	Force bool

	result LaunchResult
}

// LaunchResult is what a LaunchPeriodic decided.
type LaunchResult struct {
	Result
	// Skipped reports a launch not made because the parent prohibits
	// overlap and Running names a child still pending or running.
	Skipped bool
	Running string
}

var _ commands.Command = (*LaunchPeriodic)(nil)

// Result returns what the last Decide decided; JobID is the child's id.
func (l *LaunchPeriodic) Result() LaunchResult { return l.result }

// Validate implements commands.Command.
func (l *LaunchPeriodic) Validate() error {
	if err := namespace.ValidName("namespace", l.Namespace); err != nil {
		return err
	}
	return ValidID("id", l.ID)
}

// Decide implements commands.Command. The child must not exist yet (a
// launch decided twice, e.g. by two leaders in turn, is a 409 the second
// time) and the parent must be unchanged since it was read.
func (l *LaunchPeriodic) Decide(v projections.View, now time.Time, ids commands.IDs) (commands.Decision, error) {
	l.result = LaunchResult{}
	parent, err := lookup(v, l.Namespace, l.ID)
	if err != nil {
		return commands.Decision{}, err
	}
	switch {
	case !jobs.Periodic(&parent.Job):
		return commands.Decision{}, commands.Invalid("id", "job %q is not a periodic job", l.ID)
	case parent.Stop:
		return commands.Decision{}, commands.Invalid("id", "job %q is stopped", l.ID)
	}
	if !l.Force && parent.Periodic.ProhibitOverlap {
		running, err := liveChild(v, parent)
		if err != nil {
			return commands.Decision{}, err
		}
		if running != "" {
			l.result = LaunchResult{Skipped: true, Running: running}
			return commands.Decision{}, nil
		}
	}
	launch := l.Launch
	if launch.IsZero() {
		launch = now
	}
	child := parent.Job
	child.ID = PeriodicChildID(parent.ID, launch)
	child.Name = child.ID
	child.ParentID, child.Periodic = parent.ID, nil
	dec, res, err := decideRegister(v, &child, true, 0, 0, now, ids)
	if err != nil {
		return commands.Decision{}, err
	}
	for _, p := range dec.Events {
		if e, ok := p.(*events.EvalsUpserted); ok {
			for i := range e.Evals {
				e.Evals[i].TriggeredBy = events.EvalTriggerPeriodicJob
			}
		}
	}
	dec.Preconditions = append(dec.Preconditions, unchangedSince(l.Namespace, l.ID, parent))
	l.result = LaunchResult{Result: res}
	return dec, nil
}

// liveChild returns the id of a child of periodic job parent that is
// still pending or running, "" when there is none.
func liveChild(v projections.View, parent *jobs.Job) (string, error) {
	children, err := jobs.List(v, parent.Namespace, parent.ID+PeriodicChildPrefix)
	if err != nil {
		return "", fmt.Errorf("list children of %q: %w", parent.ID, err)
	}
	for _, c := range children {
		if c.ParentID == parent.ID && !c.Stop && (c.Status == jobs.StatusPending || c.Status == jobs.StatusRunning) {
			return c.ID, nil
		}
	}
	return "", nil
}
