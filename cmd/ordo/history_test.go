package main

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/ordoplane/ordo/events"
)

func TestHistoryCommand(t *testing.T) {
	a := events.Allocation{ID: "alloc-1", Namespace: "default", EvalID: "eval-1", Name: "web.web[0]", NodeID: "node-1",
		JobID: "web", TaskGroup: "web", DesiredStatus: "run", ClientStatus: "pending"}
	addr := startSeededAgent(t,
		&events.JobRegistered{Job: events.Job{ID: "web", Namespace: "default", Type: "service",
			TaskGroups: []events.TaskGroup{{Name: "web", Count: 1}}}},
		&events.AllocsPlaced{EvalID: "eval-1", Allocs: []events.Allocation{a}},
		&events.AllocsClientUpdated{NodeID: "node-1", Updates: []events.AllocClientUpdate{{ID: "alloc-1", ClientStatus: "running"}}},
		&events.AllocsDesiredUpdated{EvalID: "eval-2", Updates: []events.AllocDesiredUpdate{{ID: "alloc-1", DesiredStatus: "stop",
			DesiredDescription: "alloc not needed due to job being stopped"}}},
		&events.AllocsClientUpdated{NodeID: "node-1", Updates: []events.AllocClientUpdate{{ID: "alloc-1", ClientStatus: "complete"}}},
	)
	defer func(n int) { historyPageSize = n }(historyPageSize)
	historyPageSize = 2 // the whole history takes three requests

	code, stdout, stderr := runCLI("history", "-address", addr, "alloc", "alloc-1")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	// Times and indexes vary: mask them.
	masked := regexp.MustCompile(`(?m)^\d+ +\S+Z`).ReplaceAllString(stdout, "I  T")
	masked = regexp.MustCompile(` +`).ReplaceAllString(masked, " ")
	want := `Index Time Type Actor Summary
I T AllocsPlaced - placed on node node-1 by eval eval-1 (web.web[0], job version 0)
 NodeID: (none) → node-1
 JobVersion: (none) → 0
 DesiredStatus: (none) → run
 ClientStatus: (none) → pending
I T AllocsClientUpdated - client status pending → running
 ClientStatus: pending → running
I T AllocsDesiredUpdated - desired status run → stop (alloc not needed due to job being stopped), by eval eval-2
 DesiredStatus: run → stop
 DesiredDescription: (none) → alloc not needed due to job being stopped
I T AllocsClientUpdated - client status running → complete
 ClientStatus: running → complete
`
	if masked != want {
		t.Fatalf("history:\n%s\nmasked:\n%s\nwant:\n%s", stdout, masked, want)
	}

	// -n 2 shows the two most recent, oldest first; -reverse newest first.
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"-n", "2"}, []string{"AllocsDesiredUpdated", "AllocsClientUpdated"}},
		{[]string{"-n", "3", "-reverse"}, []string{"AllocsClientUpdated", "AllocsDesiredUpdated", "AllocsClientUpdated"}},
		{[]string{"-reverse"}, []string{"AllocsClientUpdated", "AllocsDesiredUpdated", "AllocsClientUpdated", "AllocsPlaced"}},
		{[]string{"-since", "1h"}, []string{"AllocsPlaced", "AllocsClientUpdated", "AllocsDesiredUpdated", "AllocsClientUpdated"}},
		{[]string{"-until", "1h"}, nil},
	} {
		args := append([]string{"history", "-address", addr, "-json"}, tc.args...)
		code, stdout, stderr := runCLI(append(args, "alloc", "alloc-1")...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", tc.args, code, stderr)
		}
		var evs []struct{ Type string }
		if err := json.Unmarshal([]byte(stdout), &evs); err != nil {
			t.Fatalf("%v: %v in %s", tc.args, err, stdout)
		}
		var got []string
		for _, e := range evs {
			got = append(got, e.Type)
		}
		if strings.Join(got, " ") != strings.Join(tc.want, " ") {
			t.Errorf("%v: %v, want %v", tc.args, got, tc.want)
		}
	}

	// Jobs by "<namespace>/<id>" or -namespace; payloads on demand.
	for _, args := range [][]string{{"job", "default/web"}, {"-namespace", "default", "job", "web"}, {"job", "web"}} {
		code, stdout, stderr := runCLI(append([]string{"history", "-address", addr, "-payload"}, args...)...)
		if code != 0 || !strings.Contains(stdout, "registered version 0 (type service, count web 1)") ||
			!strings.Contains(stdout, `payload: {"Job":`) {
			t.Errorf("%v: exit %d\n%s%s", args, code, stdout, stderr)
		}
	}

	for _, tc := range []struct {
		args []string
		says string
	}{
		{[]string{"alloc", "nope"}, "not found"},
		{[]string{"widget", "x"}, `unknown kind "widget"`},
		{[]string{"alloc"}, "two arguments"},
		{[]string{"-since", "yesterday", "alloc", "alloc-1"}, "since"},
		{[]string{"-namespace", "default", "alloc", "alloc-1"}, "jobs only"},
		{[]string{"-n", "-1", "alloc", "alloc-1"}, "negative"},
	} {
		code, _, stderr := runCLI(append([]string{"history", "-address", addr}, tc.args...)...)
		if code != 1 || !strings.Contains(stderr, tc.says) {
			t.Errorf("%v: exit %d, stderr %q, want it to say %q", tc.args, code, stderr, tc.says)
		}
	}
}
