package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/ordoplane/ordo/cmd/agent"
	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/node"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/history/rerun"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/evals"
	"github.com/ordoplane/ordo/storage/archive"
	"github.com/ordoplane/ordo/test/replay"
)

// getJSON GETs path from the agent's API and decodes a 200 answer into
// out; it returns the status.
func getJSON(t *testing.T, a *agent.Agent, path string, out any) int {
	t.Helper()
	resp, err := http.Get("http://" + a.HTTPAddr() + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode == http.StatusOK && out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("GET %s: %v: %s", path, err, b)
		}
	}
	return resp.StatusCode
}

// quiet waits until nothing is appended until the test acts (WaitQuiet).
func quiet(t *testing.T, a *agent.Agent) uint64 {
	t.Helper()
	return replay.WaitQuiet(t, a.Store(), a.FSM().Notifier(), settleTimeout)
}

// TestRescheduleAPIReproducesEveryDecision drives a real agent through a
// workload — service, batch and system jobs, a job too big to fit
// (blocked, then unblocked), scaling up and down, a node going down and
// one joining — then asks GET /v1/debug/reschedule/{eval_id}, with an id
// prefix, for every eval a worker completed: each must answer Equal with
// the recorded plan, and the applied index and the archive must not move
// (nothing is appended by a re-run), nor scratch stores stay behind.
func TestRescheduleAPIReproducesEveryDecision(t *testing.T) {
	a, c := startAgent(t)
	for i := range 3 {
		readyNode(t, a, fmt.Sprintf("n%d", i))
	}
	register(t, c, job("service", "web", 4, 100))
	register(t, c, job("service", "big", 11, 300)) // 3300 MHz of 3000: blocked
	register(t, c, job("batch", "report", 2, 100))
	register(t, c, job("system", "agent", 1, 50))
	settle(t, a)
	register(t, c, job("service", "web", 6, 100))
	settle(t, a)
	register(t, c, job("service", "web", 3, 100))
	settle(t, a)
	if _, err := a.Pipeline().Run(context.Background(), "node.status", commands.Request{Actor: "test"},
		node.UpdateStatus{ID: "n1", Status: events.NodeStatusDown, MissedHeartbeat: true}); err != nil {
		t.Fatal(err)
	}
	settle(t, a)
	readyNode(t, a, "n3")
	quiet(t, a)

	snap := a.Store().Snapshot()
	var all []*evals.Eval
	err := evals.Scan(projections.NewView(snap), evals.Query{}, func(e *evals.Eval) error { all = append(all, e); return nil })
	lastBefore, _ := archive.Last(snap)
	snap.Close()
	if err != nil {
		t.Fatal(err)
	}
	appliedBefore := a.FSM().Applied()

	reran, placements, stops := 0, 0, 0
	byType := map[string]int{}
	var undecided string
	for _, e := range all {
		if e.Status != events.EvalStatusComplete || e.SnapshotIndex == 0 {
			if undecided == "" && e.Status == events.EvalStatusBlocked {
				undecided = e.ID
			}
			continue
		}
		var res rerun.Result
		prefix := e.ID[:len(e.ID)-2]
		if code := getJSON(t, a, "/v1/debug/reschedule/"+prefix, &res); code != http.StatusOK {
			t.Errorf("eval %s (%s %s): status %d", e.ID, e.Type, e.TriggeredBy, code)
			continue
		}
		reran++
		byType[e.Type]++
		if res.EvalID != e.ID || res.SnapshotIndex != e.SnapshotIndex || res.Recorded == nil || res.Recomputed == nil {
			t.Errorf("eval %s: answered for %s at %d (recorded %v, recomputed %v)", e.ID, res.EvalID, res.SnapshotIndex,
				res.Recorded != nil, res.Recomputed != nil)
			continue
		}
		if !res.Equal || len(res.Diff) != 0 {
			t.Errorf("eval %s (%s, %s, job %s) does not reproduce: %+v", e.ID, e.Type, e.TriggeredBy, e.JobID, res.Diff)
		}
		placements += len(res.Recorded.Placements)
		stops += len(res.Recorded.Stops)
		for _, s := range res.Recorded.Stops {
			if res.Allocs[s.ID].NodeID == "" {
				t.Errorf("eval %s: stopped alloc %s is not described", e.ID, s.ID)
			}
		}
	}
	t.Logf("re-ran %d of %d evals over the API (by type %v): %d placements, %d stops", reran, len(all), byType, placements, stops)
	for _, typ := range []string{"service", "batch", "system"} {
		if byType[typ] == 0 {
			t.Errorf("no %s eval was re-run", typ)
		}
	}
	if placements == 0 || stops == 0 {
		t.Errorf("the workload made %d placements and %d stops: too little to check", placements, stops)
	}

	if undecided == "" {
		t.Log("no blocked eval left to ask about")
	} else {
		if code := getJSON(t, a, "/v1/debug/reschedule/"+undecided, nil); code != http.StatusConflict {
			t.Errorf("blocked eval %s: status %d, want 409", undecided, code)
		}
	}
	if code := getJSON(t, a, "/v1/debug/reschedule/no-such-eval", nil); code != http.StatusNotFound {
		t.Errorf("unknown eval: status %d, want 404", code)
	}

	snap = a.Store().Snapshot()
	lastAfter, _ := archive.Last(snap)
	snap.Close()
	if a.FSM().Applied() != appliedBefore || lastAfter != lastBefore {
		t.Errorf("re-runs moved the log: applied %d → %d, archive %d → %d", appliedBefore, a.FSM().Applied(), lastBefore, lastAfter)
	}
	left, _ := os.ReadDir(filepath.Join(a.Config().DataDir, "scratch"))
	if len(left) != 0 {
		t.Errorf("scratch stores left behind: %v", left)
	}
}
