package deployment_test

import (
	"errors"
	"testing"
	"time"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/deployment"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	pt "github.com/ordoplane/ordo/projections/projectionstest"
)

func TestDecide(t *testing.T) {
	store := pt.OpenStore(t)
	f := pt.NewFSM(t, store)
	dep := func(id, status string, canaries int) *events.DeploymentUpserted {
		return &events.DeploymentUpserted{Deployment: events.Deployment{ID: id, Namespace: "default", JobID: "web", Status: status,
			TaskGroups: map[string]*events.DeploymentState{"web": {DesiredCanaries: canaries}, "db": {}}}}
	}
	pt.ApplyOne(t, f, 1, pt.Entry(t, "c1", dep("run", events.DeploymentStatusRunning, 1), dep("paused", events.DeploymentStatusPaused, 1),
		dep("done", events.DeploymentStatusSuccessful, 1), dep("nocanary", events.DeploymentStatusRunning, 0)))
	v := projections.NewView(store)
	now := time.Unix(0, pt.LeaderTime)
	ids := func() string { return "eval-1" }

	for _, tc := range []struct {
		name   string
		cmd    commands.Command
		status string // the status decided; "" for no change
		eval   bool
		err    string // "conflict", "invalid", "notfound"
	}{
		{"promote all", deployment.Promote{ID: "run", All: true}, events.DeploymentStatusRunning, true, ""},
		{"promote the canary groups", deployment.Promote{ID: "run", Groups: []string{"web"}}, events.DeploymentStatusRunning, true, ""},
		{"promote some groups", deployment.Promote{ID: "run", Groups: []string{"db"}}, "", false, "invalid"},
		{"promote without canaries", deployment.Promote{ID: "nocanary", All: true}, "", false, "invalid"},
		{"promote paused", deployment.Promote{ID: "paused", All: true}, "", false, "conflict"},
		{"promote terminal", deployment.Promote{ID: "done", All: true}, "", false, "conflict"},
		{"pause", deployment.Pause{ID: "run", Pause: true}, events.DeploymentStatusPaused, false, ""},
		{"pause paused", deployment.Pause{ID: "paused", Pause: true}, "", false, ""},
		{"resume", deployment.Pause{ID: "paused"}, events.DeploymentStatusRunning, true, ""},
		{"fail", deployment.Fail{ID: "run"}, events.DeploymentStatusFailed, true, ""},
		{"fail terminal", deployment.Fail{ID: "done"}, "", false, "conflict"},
		{"fail missing", deployment.Fail{ID: "zz"}, "", false, "notfound"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.cmd.Validate(); err != nil {
				t.Fatal(err)
			}
			dec, err := tc.cmd.Decide(v, now, ids)
			var (
				ce *commands.ConflictError
				ve *commands.ValidationError
				nf *commands.NotFoundError
			)
			switch tc.err {
			case "conflict":
				if !errors.As(err, &ce) {
					t.Fatalf("err = %v, want a conflict", err)
				}
				return
			case "invalid":
				if !errors.As(err, &ve) {
					t.Fatalf("err = %v, want a validation error", err)
				}
				return
			case "notfound":
				if !errors.As(err, &nf) {
					t.Fatalf("err = %v, want not found", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.status == "" {
				if len(dec.Events) != 0 {
					t.Fatalf("a no-op decided %+v", dec.Events)
				}
				return
			}
			up := dec.Events[0].(*events.DeploymentStatusUpdated)
			if up.Status != tc.status || (len(dec.Events) == 2) != tc.eval || len(dec.Preconditions) != 1 || dec.Preconditions[0].Op != events.ModifyIndex {
				t.Fatalf("decision = %+v %+v", up, dec)
			}
			if tc.eval {
				if e := dec.Events[1].(*events.EvalsUpserted).Evals[0]; e.DeploymentID == "" || e.TriggeredBy != events.EvalTriggerDeploymentWatcher {
					t.Fatalf("eval = %+v", e)
				}
			}
		})
	}
	if err := (deployment.Promote{ID: "run"}).Validate(); err == nil {
		t.Fatal("a promote naming neither All nor Groups validated")
	}
}
