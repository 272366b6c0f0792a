package periodic

import (
	"errors"
	"fmt"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/ordoplane/ordo/events"
)

// ErrNoLaunch is returned by Next for a schedule with no launch within
// the next five years (robfig/cron's horizon), such as 30 February.
var ErrNoLaunch = errors.New("ordo: periodic job has no next launch")

// parser reads standard five-field cron expressions and descriptors.
var parser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// Specs returns the cron expressions of p: Spec, or Specs (Nomad's crons).
func Specs(p *events.PeriodicConfig) []string {
	if p.Spec != "" {
		return []string{p.Spec}
	}
	return p.Specs
}

// Next returns the first launch of p strictly after after: the earliest of
// its specs' next times, evaluated in p's time zone (UTC when empty).
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
		s, err := parser.Parse(spec)
		if err != nil {
			return time.Time{}, fmt.Errorf("periodic cron %q: %w", spec, err)
		}
		t := s.Next(after.In(loc))
		if !t.IsZero() && (next.IsZero() || t.Before(next)) {
			next = t
		}
	}
	if next.IsZero() {
		return time.Time{}, ErrNoLaunch
	}
	return next, nil
}
