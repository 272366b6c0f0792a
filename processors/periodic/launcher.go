package periodic

import (
	"context"
	"errors"
	"fmt"
	"github.com/ordoplane/ordo/clock"
	"github.com/ordoplane/ordo/processors/defaults"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/ordoplane/ordo/processors/follow"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/job"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/jobs"
)

// Submitter and State are what the launcher is given (package follow).
type (
	Submitter = follow.Submitter
	State     = follow.State
)

// Config configures a Launcher.
type Config struct {
	// Pipeline receives the launches; required.
	Pipeline Submitter
	// State is read for periodic jobs; required.
	State State
	// Clock tells when a schedule's next launch is due; default
	// clock.System.
	Clock clock.Clock
	// RetryInterval is the wait before a failed launch is tried again;
	// default 5s.
	RetryInterval time.Duration
	// Logger; default slog.Default().
	Logger *slog.Logger
}

// DefaultConfig returns the defaults, without the required fields.
func DefaultConfig() Config {
	return Config{Clock: clock.System{}, RetryInterval: 5 * time.Second, Logger: slog.Default()}
}

// Validate reports a Config that cannot work.
func (c Config) Validate() error {
	return follow.Validate("periodic", c.Pipeline, c.State, c.RetryInterval)
}

// Launcher launches periodic jobs' children while this server leads.
type Launcher struct {
	cfg Config
	log *slog.Logger
}

// New returns a Launcher; zero fields of cfg take DefaultConfig's values.
func New(cfg Config) (*Launcher, error) {
	defaults.Fill(&cfg, DefaultConfig())
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Launcher{cfg: cfg, log: cfg.Logger}, nil
}

// Name implements supervisor.Processor.
func (l *Launcher) Name() string { return "periodic" }

// actor names the launcher in the entries it appends.
const actor = "system:periodic"

// tracked is one periodic job's schedule.
type tracked struct {
	ns, id string
	cfg    *events.PeriodicConfig
	// modify is the JobModifyIndex the schedule was computed for.
	modify uint64
	// launch is the next launch time (zero: none); wake is when to try it,
	// later than launch after a failed attempt.
	launch, wake time.Time
}

// Run implements supervisor.Processor: it launches periodic jobs until
// ctx ends.
func (l *Launcher) Run(ctx context.Context) error {
	sched := map[string]*tracked{}
	notify := l.cfg.State.Notifier()
	for {
		// Take the watch channel before reading, so no change is missed.
		changed := notify.Table(jobs.Table)
		if err := l.sync(sched); err != nil {
			return err
		}
		now := l.cfg.Clock.Now()
		for _, k := range slices.Sorted(maps.Keys(sched)) {
			if t := sched[k]; !t.wake.IsZero() && !now.Before(t.wake) {
				if err := l.launch(ctx, t, now); err != nil {
					return err
				}
			}
		}
		var wait <-chan time.Time
		if next := earliest(sched); !next.IsZero() {
			wait = l.cfg.Clock.After(next.Sub(now))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-changed:
		case <-wait:
		}
	}
}

// earliest returns the earliest wake time in sched, zero when none.
func earliest(sched map[string]*tracked) time.Time {
	var t time.Time
	for _, s := range sched {
		if !s.wake.IsZero() && (t.IsZero() || s.wake.Before(t)) {
			t = s.wake
		}
	}
	return t
}

// sync brings sched in line with the periodic jobs in the projection: new
// ones and ones whose spec changed are scheduled from now, gone or
// stopped ones are dropped.
func (l *Launcher) sync(sched map[string]*tracked) error {
	snap := l.cfg.State.ReadSnapshot()
	defer snap.Close()
	v := projections.NewView(snap)
	list, err := jobs.List(v, jobs.AllNamespaces, "")
	if err != nil {
		return fmt.Errorf("periodic: list jobs: %w", err)
	}
	seen := map[string]bool{}
	now := l.cfg.Clock.Now()
	for _, s := range list {
		if !s.Periodic || s.Stop {
			continue
		}
		k := jobs.Key(s.Namespace, s.ID)
		seen[k] = true
		if t, ok := sched[k]; ok && t.modify == s.JobModifyIndex {
			continue
		}
		j, err := jobs.Get(v, s.Namespace, s.ID)
		if err != nil {
			return fmt.Errorf("periodic: read job %q: %w", s.ID, err)
		}
		t := &tracked{ns: s.Namespace, id: s.ID, cfg: j.Periodic, modify: j.JobModifyIndex}
		if next, err := Next(j.Periodic, now); err != nil {
			l.log.Warn("periodic job will not launch", "namespace", s.Namespace, "job", s.ID, "err", err)
		} else {
			t.launch, t.wake = next, next
			l.log.Debug("periodic job scheduled", "namespace", s.Namespace, "job", s.ID, "next", next)
		}
		sched[k] = t
	}
	for k := range sched {
		if !seen[k] {
			delete(sched, k)
		}
	}
	return nil
}

// launch launches t's child for its launch time and schedules the next
// launch after now; a failure that may pass is retried after
// RetryInterval. It returns an error only when ctx ends.
func (l *Launcher) launch(ctx context.Context, t *tracked, now time.Time) error {
	cmd := &job.LaunchPeriodic{Namespace: t.ns, ID: t.id, Launch: t.launch}
	_, err := l.cfg.Pipeline.Run(ctx, "job.periodic.launch", commands.Request{Actor: actor}, cmd)
	var (
		ce *commands.ConflictError
		nf *commands.NotFoundError
		ve *commands.ValidationError
	)
	switch {
	case err == nil:
		if r := cmd.Result(); r.Skipped {
			l.log.Info("periodic launch skipped: overlap prohibited", "namespace", t.ns, "job", t.id,
				"launch", t.launch, "running", r.Running)
		} else {
			l.log.Info("periodic job launched", "namespace", t.ns, "job", t.id, "child", r.JobID, "eval", r.EvalID)
		}
	case ctx.Err() != nil:
		return ctx.Err()
	case errors.As(err, &ce) && strings.Contains(ce.Precondition.Key, job.PeriodicChildPrefix):
		// The child exists: this launch was made before (by us or an
		// earlier leader).
		l.log.Debug("periodic launch already made", "namespace", t.ns, "job", t.id, "launch", t.launch)
	case errors.As(err, &nf), errors.As(err, &ve):
		// The job is gone, stopped or no longer periodic; the next sync
		// drops or reschedules it.
		l.log.Debug("periodic launch not made", "namespace", t.ns, "job", t.id, "err", err)
	default:
		l.log.Warn("periodic launch failed; will retry", "namespace", t.ns, "job", t.id, "launch", t.launch, "err", err)
		t.wake = now.Add(l.cfg.RetryInterval)
		return nil
	}
	next, err := Next(t.cfg, now)
	if err != nil {
		t.launch, t.wake = time.Time{}, time.Time{}
		return nil
	}
	t.launch, t.wake = next, next
	return nil
}
