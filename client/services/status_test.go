package services_test

import (
	"testing"
	"time"

	"github.com/ordoplane/ordo/client/services"
	"github.com/ordoplane/ordo/events"
)

const (
	pass = events.CheckPassing
	warn = events.CheckWarning
	crit = events.CheckCritical
	pend = events.CheckPending
)

func TestStatusThresholds(t *testing.T) {
	for _, c := range []struct {
		name    string
		check   events.ServiceCheck
		results []string
		want    []string // status after each result
	}{
		{"immediate", events.ServiceCheck{}, []string{pass, crit, warn, pass},
			[]string{pass, crit, warn, pass}},
		{"initial status kept until a result", events.ServiceCheck{InitialStatus: crit}, []string{pass},
			[]string{pass}},
		{"success_before_passing", events.ServiceCheck{SuccessBeforePassing: 3}, []string{pass, pass, crit, pass, pass, pass},
			[]string{pend, pend, crit, crit, crit, pass}},
		{"failures_before_critical", events.ServiceCheck{FailuresBeforeCritical: 2}, []string{pass, crit, pass, crit, crit, warn},
			[]string{pass, pass, pass, pass, crit, warn}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := services.NewStatus(&c.check)
			for i, r := range c.results {
				before := s.Status
				changed := s.Observe(&c.check, r)
				if s.Status != c.want[i] || changed != (before != c.want[i]) {
					t.Fatalf("result %d (%s): status %s changed %v, want %s", i, r, s.Status, changed, c.want[i])
				}
			}
		})
	}
}

func TestRestarter(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	cr := &events.CheckRestart{Limit: 3, Grace: 10 * time.Second}
	var r services.Restarter
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	steps := []struct {
		status string
		sec    int
		want   bool
	}{
		{crit, 1, false}, {crit, 5, false}, {crit, 9, false}, // within grace: not counted
		{crit, 11, false}, {crit, 12, false},
		{pass, 13, false}, // a healthy result starts over
		{crit, 14, false}, {warn, 15, false}, {crit, 16, true},
		{crit, 17, false}, // counting starts over after a restart
	}
	for i, s := range steps {
		if got := r.Observe(cr, s.status, at(s.sec), t0); got != s.want {
			t.Fatalf("step %d (%s at %ds): restart %v, want %v", i, s.status, s.sec, got, s.want)
		}
	}
	var iw services.Restarter
	ignore := &events.CheckRestart{Limit: 1, IgnoreWarnings: true}
	if iw.Observe(ignore, warn, t0, t0) || !iw.Observe(ignore, crit, t0, t0) {
		t.Fatal("ignore_warnings: a warning must not count, a critical must")
	}
	var none services.Restarter
	if none.Observe(nil, crit, t0, t0) || none.Observe(&events.CheckRestart{}, crit, t0, t0) {
		t.Fatal("no check_restart (or limit 0) never restarts")
	}
}

func TestStatusCodes(t *testing.T) {
	for code, want := range map[int]string{200: pass, 204: pass, 299: pass, 301: crit, 404: crit, 429: warn, 500: crit, 503: crit} {
		if got := services.HTTPStatus(code); got != want {
			t.Errorf("HTTP %d: %s, want %s", code, got, want)
		}
	}
	for code, want := range map[int]string{0: pass, 1: warn, 2: crit, 127: crit, -1: crit} {
		if got := services.ScriptStatus(code); got != want {
			t.Errorf("exit %d: %s, want %s", code, got, want)
		}
	}
}
