package deployment_test

import (
	"strings"
	"testing"
	"time"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/deployment"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections/deployments"
	"github.com/ordoplane/ordo/projections/fsm"
	pt "github.com/ordoplane/ordo/projections/projectionstest"
)

// decideThenApply decides cmd on the state as it is, applies the
// watcher's progress recorded meanwhile (between the user's decision and
// its commit), then applies the user's entry with its preconditions.
func (h *history) decideThenApply(cmd commands.Command, meanwhile ...events.Payload) (fsm.Result, *deployments.Deployment) {
	h.t.Helper()
	n := 0
	dec, err := cmd.Decide(h.view(), time.Unix(0, pt.LeaderTime), func() string { n++; return "id-" + string(rune('a'+n)) })
	if err != nil {
		h.t.Fatal(err)
	}
	if len(meanwhile) > 0 {
		h.apply(meanwhile...)
	}
	e := pt.Entry(h.t, "", dec.Events...)
	e.Preconditions = dec.Preconditions
	h.index++
	res := pt.ApplyOne(h.t, h.f, h.index, e)
	d, err := deployments.Get(h.view(), "d1")
	if err != nil {
		h.t.Fatal(err)
	}
	return res, d
}

// progress is what the deployment watcher records about d1 while a
// user's command is in flight: new counts, so a new modify index.
func progress(h *history, healthy int) *events.DeploymentUpserted {
	d, err := deployments.Get(h.view(), "d1")
	if err != nil {
		h.t.Fatal(err)
	}
	nd := d.Deployment
	st := *nd.TaskGroups["web"]
	st.PlacedAllocs, st.HealthyAllocs = 2, healthy
	nd.TaskGroups = map[string]*events.DeploymentState{"web": &st}
	return &events.DeploymentUpserted{Deployment: nd}
}

// TestUserChangeWinsOverWatcherProgress: a user's fail, pause, resume or
// promote decided before the watcher records progress on the deployment
// (which moves its modify index) still applies, over the watcher's
// counts, which it keeps; a user's change whose reason is gone is refused.
func TestUserChangeWinsOverWatcherProgress(t *testing.T) {
	for _, tc := range []struct {
		name    string
		setup   func(h *history)
		cmd     commands.Command
		status  string
		promote bool
	}{
		{"fail", nil, deployment.Fail{ID: "d1"}, events.DeploymentStatusFailed, false},
		{"pause", nil, deployment.Pause{ID: "d1", Pause: true}, events.DeploymentStatusPaused, false},
		{"resume", func(h *history) {
			h.apply(&events.DeploymentStatusUpdated{ID: "d1", Status: events.DeploymentStatusPaused})
		}, deployment.Pause{ID: "d1"}, events.DeploymentStatusRunning, false},
		{"promote", func(h *history) {
			h.apply(&events.AllocsPlaced{EvalID: "e1", Allocs: []events.Allocation{canary("c1", &yes)}},
				&events.DeploymentStatusUpdated{ID: "d1", Status: events.DeploymentStatusRunning})
			d, _ := deployments.Get(h.view(), "d1")
			nd := d.Deployment
			st := *nd.TaskGroups["web"]
			st.PlacedCanaries = []string{"c1"}
			nd.TaskGroups = map[string]*events.DeploymentState{"web": &st}
			h.apply(&events.DeploymentUpserted{Deployment: nd})
		}, deployment.Promote{ID: "d1", All: true}, events.DeploymentStatusRunning, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHistory(t)
			if tc.setup != nil {
				tc.setup(h)
			}
			res, d := h.decideThenApply(tc.cmd, progress(h, 1))
			if res.Err != nil {
				t.Fatalf("the user's %s lost to the watcher's progress: %v", tc.name, res.Err)
			}
			g := d.TaskGroups["web"]
			if d.Status != tc.status || g.HealthyAllocs != 1 || g.PlacedAllocs != 2 || g.Promoted != tc.promote {
				t.Fatalf("after %s: %+v %+v", tc.name, d, g)
			}
		})
	}

	// The watcher finished the deployment meanwhile: nothing to fail.
	h := newHistory(t)
	done := progress(h, 2)
	done.Deployment.Status = events.DeploymentStatusSuccessful
	if res, d := h.decideThenApply(deployment.Fail{ID: "d1"}, done); res.Err == nil || d.Status != events.DeploymentStatusSuccessful ||
		!strings.Contains(res.Err.Error(), "deployment is successful") {
		t.Fatalf("failing a deployment that succeeded meanwhile: %v, %s", res.Err, d.Status)
	}
	// A canary turned unhealthy meanwhile: no promotion.
	h = newHistory(t)
	h.apply(&events.AllocsPlaced{EvalID: "e1", Allocs: []events.Allocation{canary("c1", &yes)}})
	d, _ := deployments.Get(h.view(), "d1")
	nd := d.Deployment
	nd.TaskGroups = map[string]*events.DeploymentState{"web": {DesiredTotal: 2, DesiredCanaries: 1, PlacedCanaries: []string{"c1"}}}
	h.apply(&events.DeploymentUpserted{Deployment: nd})
	sick := canary("c1", &no)
	if res, d := h.decideThenApply(deployment.Promote{ID: "d1", All: true},
		&events.AllocsPlaced{EvalID: "e1", Allocs: []events.Allocation{sick}}); res.Err == nil || d.TaskGroups["web"].Promoted {
		t.Fatalf("promoting a canary that turned unhealthy: %v, %+v", res.Err, d.TaskGroups["web"])
	} else if !strings.Contains(res.Err.Error(), "not all canaries are healthy") {
		t.Fatalf("refused for %v", res.Err)
	}
}
