package services

import (
	"time"

	"github.com/ordoplane/ordo/events"
)

// initialStatus is a check's status before its first result: its
// initial_status, else pending.
func initialStatus(c *events.ServiceCheck) string {
	switch c.InitialStatus {
	case events.CheckPassing, events.CheckWarning, events.CheckCritical:
		return c.InitialStatus
	}
	return events.CheckPending
}

// Status is a check's status and the results in a row that move it:
// success_before_passing results passing in a row make it passing,
// failures_before_critical results failing (warning or critical) in a
// row make it warning or critical; until then it keeps its status.
type Status struct {
	Status    string
	successes int
	failures  int
}

// NewStatus returns c's status before its first result.
func NewStatus(c *events.ServiceCheck) Status { return Status{Status: initialStatus(c)} }

// Observe applies one result (passing, warning or critical) of check c
// and reports whether the status changed.
func (s *Status) Observe(c *events.ServiceCheck, result string) bool {
	next := s.Status
	if result == events.CheckPassing {
		s.failures = 0
		s.successes++
		if s.successes >= max(c.SuccessBeforePassing, 1) {
			next = events.CheckPassing
		}
	} else {
		s.successes = 0
		s.failures++
		if s.failures >= max(c.FailuresBeforeCritical, 1) {
			next = result
		}
	}
	changed := next != s.Status
	s.Status = next
	return changed
}

// Restarter counts a check's unhealthy statuses in a row for
// check_restart: critical, and warning unless ignore_warnings; results
// within grace of the task's start do not count, a healthy one resets.
type Restarter struct {
	unhealthy int
}

// Observe applies the check's status after a result at now, the task's
// attempt having started at started; true when the task is to be
// restarted (the count then starts over).
func (r *Restarter) Observe(cr *events.CheckRestart, status string, now, started time.Time) bool {
	if cr == nil || cr.Limit <= 0 {
		return false
	}
	if now.Before(started.Add(cr.Grace)) {
		return false
	}
	bad := status == events.CheckCritical || (status == events.CheckWarning && !cr.IgnoreWarnings)
	if !bad {
		r.unhealthy = 0
		return false
	}
	r.unhealthy++
	if r.unhealthy >= cr.Limit {
		r.unhealthy = 0
		return true
	}
	return false
}

// countsForHealth reports whether a check's status counts for the
// deployment health of a service with onUpdate, and whether it passes.
func countsForHealth(onUpdate, status string) (counts, passing bool) {
	switch onUpdate {
	case "ignore":
		return false, false
	case "ignore_warnings":
		return true, status == events.CheckPassing || status == events.CheckWarning
	}
	return true, status == events.CheckPassing
}
