package periodic

import (
	"errors"
	"fmt"
	"time"

	"github.com/ordoplane/ordo/commands/job/jobspec"
	"github.com/ordoplane/ordo/events"
)

// ErrNoLaunch is returned by Next for a schedule with no launch left
// (cronexpr looks no further than the year 2099), such as 30 February or a
// year that has passed.
var ErrNoLaunch = errors.New("ordo: periodic job has no next launch")

// Specs returns the cron expressions of p: Spec, or Specs (Nomad's crons).
func Specs(p *events.PeriodicConfig) []string {
	if p.Spec != "" {
		return []string{p.Spec}
	}
	return p.Specs
}

// Next returns the first launch of p strictly after after: the earliest of
// its specs' next times, evaluated in p's time zone (UTC when empty). The
// specs are read by jobspec.ParseCron, as registration validated them: as
// Nomad reads them, with hashicorp/cronexpr (five fields, six with a year,
// seven with a second too, or @hourly and the like).
func Next(p *events.PeriodicConfig, after time.Time) (time.Time, error) {
	if p == nil {
		return time.Time{}, errors.New("ordo: not a periodic job")
	}
	loc := time.UTC
	if p.TimeZone != "" {
		l, err := time.LoadLocation(p.TimeZone)
		if err != nil {
			return time.Time{}, fmt.Errorf("periodic time zone %q: %w", p.TimeZone, err)
		}
		loc = l
	}
	specs := Specs(p)
	if len(specs) == 0 {
		return time.Time{}, errors.New("ordo: periodic job has no cron expression")
	}
	var next time.Time
	for _, spec := range specs {
		t, err := nextOf(spec, after.In(loc))
		if err != nil {
			return time.Time{}, err
		}
		if !t.IsZero() && (next.IsZero() || t.Before(next)) {
			next = t
		}
	}
	if next.IsZero() {
		return time.Time{}, ErrNoLaunch
	}
	return next, nil
}

// nextOf returns spec's first time strictly after after (zero when there is
// none). An Expression keeps scratch state while it searches, so each call
// parses its own; a panic in the library is an error, as in Nomad.
func nextOf(spec string, after time.Time) (t time.Time, err error) {
	e, err := jobspec.ParseCron(spec)
	if err != nil {
		return time.Time{}, fmt.Errorf("periodic cron %q: %w", spec, err)
	}
	defer func() {
		if r := recover(); r != nil {
			t, err = time.Time{}, fmt.Errorf("periodic cron %q: next launch: %v", spec, r)
		}
	}()
	return e.Next(after), nil
}
