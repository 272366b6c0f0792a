package main

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/ordoplane/ordo/events"
)

// TestHistoryOfAJobShowsItsAllocations: `ordo history job` shows what
// happened to the job's allocations (client reports and desired updates
// carry no job key) with an Entity column; -related=false only the job's
// own events; -n counts events, not lines.
func TestHistoryOfAJobShowsItsAllocations(t *testing.T) {
	alloc := func(id, name string) events.Allocation {
		return events.Allocation{ID: id, Namespace: "default", EvalID: "eval-1", Name: name, NodeID: "node-1",
			JobID: "web", TaskGroup: "web", DesiredStatus: "run", ClientStatus: "pending"}
	}
	addr := startSeededAgent(t,
		&events.JobRegistered{Job: events.Job{ID: "web", Namespace: "default", Type: "service",
			TaskGroups: []events.TaskGroup{{Name: "web", Count: 2}}}},
		&events.AllocsPlaced{EvalID: "eval-1", Allocs: []events.Allocation{alloc("alloc-1xxxxxx", "web.web[0]"), alloc("alloc-2xxxxxx", "web.web[1]")}},
		&events.AllocsClientUpdated{NodeID: "node-1", Updates: []events.AllocClientUpdate{
			{ID: "alloc-1xxxxxx", ClientStatus: "running"}, {ID: "alloc-2xxxxxx", ClientStatus: "running"}}},
		&events.AllocsDesiredUpdated{EvalID: "eval-2", Updates: []events.AllocDesiredUpdate{{ID: "alloc-1xxxxxx", DesiredStatus: "stop",
			DesiredDescription: "alloc not needed due to job being stopped"}}},
	)
	defer func(n int) { historyPageSize = n }(historyPageSize)
	historyPageSize = 1 // one event per request: pages must keep an event's lines together

	code, stdout, stderr := runCLI("history", "-address", addr, "job", "web")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	masked := regexp.MustCompile(`(?m)^\d+ +\S+Z`).ReplaceAllString(stdout, "I  T")
	masked = regexp.MustCompile(` +`).ReplaceAllString(masked, " ")
	for _, want := range []string{
		"Index Time Entity Type Actor Summary\n",
		"I T job JobRegistered - registered version 0",
		"I T job AllocsPlaced - 2 allocs placed by eval eval-1",
		"I T alloc alloc-1x AllocsClientUpdated - client status pending → running\n ClientStatus: pending → running\n",
		"I T alloc alloc-2x AllocsClientUpdated - client status pending → running\n",
		"I T alloc alloc-1x AllocsDesiredUpdated - desired status run → stop (alloc not needed due to job being stopped), by eval eval-2\n",
	} {
		if !strings.Contains(masked, want) {
			t.Errorf("history job web lacks %q:\n%s", want, stdout)
		}
	}

	code, stdout, stderr = runCLI("history", "-address", addr, "-related=false", "job", "web")
	if code != 0 || strings.Contains(stdout, "Entity") || strings.Contains(stdout, "AllocsClientUpdated") ||
		!strings.Contains(stdout, "AllocsPlaced") {
		t.Errorf("-related=false: exit %d\n%s%s", code, stdout, stderr)
	}

	// The two most recent events: the desired update and the client
	// report of both allocations (two lines).
	code, stdout, stderr = runCLI("history", "-address", addr, "-json", "-n", "2", "job", "web")
	if code != 0 {
		t.Fatalf("-n 2: exit %d: %s", code, stderr)
	}
	var evs []struct{ Type, EntityKind, EntityID string }
	if err := json.Unmarshal([]byte(stdout), &evs); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range evs {
		got = append(got, e.Type+" "+e.EntityKind+" "+e.EntityID)
	}
	want := "AllocsClientUpdated alloc alloc-1xxxxxx,AllocsClientUpdated alloc alloc-2xxxxxx,AllocsDesiredUpdated alloc alloc-1xxxxxx"
	if strings.Join(got, ",") != want {
		t.Errorf("-n 2: %v, want %s", got, want)
	}

	if code, _, stderr := runCLI("history", "-address", addr, "-related", "alloc", "alloc-1xxxxxx"); code != 1 || !strings.Contains(stderr, "jobs only") {
		t.Errorf("-related on an alloc: exit %d %q", code, stderr)
	}
}
