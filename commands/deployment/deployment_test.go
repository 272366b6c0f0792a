package deployment_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/deployment"
	"github.com/ordoplane/ordo/commands/job/jobspec"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/deployments"
	"github.com/ordoplane/ordo/projections/fsm"
	pt "github.com/ordoplane/ordo/projections/projectionstest"
)

var yes, no = true, false

// canary returns a live canary allocation of job web with the given health
// (nil: not reported).
func canary(id string, healthy *bool) events.Allocation {
	a := events.Allocation{ID: id, Namespace: "default", EvalID: "e1", Name: "web.web[0]", NodeID: "n1", JobID: "web",
		JobVersion: 1, TaskGroup: "web", DesiredStatus: events.AllocDesiredRun, ClientStatus: events.AllocClientRunning}
	if healthy != nil {
		a.DeploymentStatus = &events.AllocDeploymentStatus{Healthy: healthy, Canary: true}
	}
	return a
}

func TestDecide(t *testing.T) {
	store := pt.OpenStore(t)
	f := pt.NewFSM(t, store)
	dep := func(id, status string, groups map[string]*events.DeploymentState) *events.DeploymentUpserted {
		return &events.DeploymentUpserted{Deployment: events.Deployment{ID: id, Namespace: "default", JobID: "web",
			JobVersion: 1, Status: status, TaskGroups: groups}}
	}
	one := func(canaries ...string) map[string]*events.DeploymentState {
		return map[string]*events.DeploymentState{"web": {DesiredCanaries: 1, PlacedCanaries: canaries}, "db": {}}
	}
	pt.ApplyOne(t, f, 1, pt.Entry(t, "c1",
		&events.AllocsPlaced{EvalID: "e1", Allocs: []events.Allocation{canary("c-ok", &yes), canary("c-sick", &no),
			canary("c-new", nil), canary("c-ok2", &yes)}},
		dep("run", events.DeploymentStatusRunning, one("c-ok")),
		dep("paused", events.DeploymentStatusPaused, one("c-ok")),
		dep("done", events.DeploymentStatusSuccessful, one("c-ok")),
		dep("nocanary", events.DeploymentStatusRunning, map[string]*events.DeploymentState{"web": {}}),
		dep("sick", events.DeploymentStatusRunning, one("c-sick")),
		dep("young", events.DeploymentStatusRunning, one("c-new")),
		dep("unplaced", events.DeploymentStatusRunning, one()),
		// A failed canary replaced by a healthy one is promotable.
		dep("replaced", events.DeploymentStatusRunning, one("c-sick", "c-ok")),
		dep("two", events.DeploymentStatusRunning, map[string]*events.DeploymentState{
			"web": {DesiredCanaries: 1, PlacedCanaries: []string{"c-ok"}},
			"api": {DesiredCanaries: 1, PlacedCanaries: []string{"c-new"}}}),
		dep("promoted", events.DeploymentStatusRunning, map[string]*events.DeploymentState{
			"web": {DesiredCanaries: 1, PlacedCanaries: []string{"c-ok"}, Promoted: true}}),
	))
	v := projections.NewView(store)
	now := time.Unix(0, pt.LeaderTime)
	ids := func() string { return "eval-1" }

	for _, tc := range []struct {
		name     string
		cmd      commands.Command
		status   string   // the status decided; "" for no change
		promoted []string // the groups promoted after a promotion
		eval     bool
		err      string // "conflict", "invalid", "notfound", or text the conflict holds
	}{
		{"promote all", deployment.Promote{ID: "run", All: true}, events.DeploymentStatusRunning, []string{"web"}, true, ""},
		{"promote the canary group", deployment.Promote{ID: "run", Groups: []string{"web"}}, events.DeploymentStatusRunning, []string{"web"}, true, ""},
		{"promote a group without canaries", deployment.Promote{ID: "run", Groups: []string{"db"}}, "", nil, false, "invalid"},
		{"promote one of two groups", deployment.Promote{ID: "two", Groups: []string{"web"}}, events.DeploymentStatusRunning, []string{"web"}, true, ""},
		{"promote two groups, one unhealthy", deployment.Promote{ID: "two", All: true}, "", nil, false, "not all canaries are healthy: group \"api\" has 0 of 1"},
		{"promote unhealthy canaries", deployment.Promote{ID: "sick", All: true}, "", nil, false, "not all canaries are healthy"},
		{"promote canaries not yet healthy", deployment.Promote{ID: "young", All: true}, "", nil, false, "not all canaries are healthy"},
		{"promote canaries not placed", deployment.Promote{ID: "unplaced", All: true}, "", nil, false, "not all canaries are healthy"},
		{"promote a replaced canary", deployment.Promote{ID: "replaced", All: true}, events.DeploymentStatusRunning, []string{"web"}, true, ""},
		{"promote again", deployment.Promote{ID: "promoted", All: true}, "", nil, false, ""},
		{"promote without canaries", deployment.Promote{ID: "nocanary", All: true}, "", nil, false, "invalid"},
		{"promote paused", deployment.Promote{ID: "paused", All: true}, "", nil, false, "conflict"},
		{"promote terminal", deployment.Promote{ID: "done", All: true}, "", nil, false, "conflict"},
		{"pause", deployment.Pause{ID: "run", Pause: true}, events.DeploymentStatusPaused, nil, false, ""},
		{"pause paused", deployment.Pause{ID: "paused", Pause: true}, "", nil, false, ""},
		{"resume", deployment.Pause{ID: "paused"}, events.DeploymentStatusRunning, nil, true, ""},
		{"fail", deployment.Fail{ID: "run"}, events.DeploymentStatusFailed, nil, true, ""},
		{"fail terminal", deployment.Fail{ID: "done"}, "", nil, false, "conflict"},
		{"fail missing", deployment.Fail{ID: "zz"}, "", nil, false, "notfound"},
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
			case "":
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
			default:
				if !errors.As(err, &ce) || !strings.Contains(err.Error(), tc.err) || commands.Status(err) != 409 {
					t.Fatalf("err = %v, want a conflict saying %q", err, tc.err)
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
			// A patch of the status (and promoted groups): it applies over
			// whatever the watcher recorded meanwhile, so its precondition
			// is what the user's intent depends on, not the modify index.
			up := dec.Events[0].(*events.DeploymentStatusUpdated)
			if tc.promoted != nil && (!up.Promote || strings.Join(up.Groups, ",") != strings.Join(tc.promoted, ",")) {
				t.Fatalf("promoted %v, want %v: %+v", up.Groups, tc.promoted, up)
			}
			want := deployments.ActiveOp
			if tc.promoted != nil {
				want = deployments.UnpausedOp
			}
			if up.Status != tc.status || (len(dec.Events) == 2) != tc.eval || dec.Preconditions[0].Op != want {
				t.Fatalf("decision = %+v", dec)
			}
			for _, p := range dec.Preconditions {
				if p.Op == events.ModifyIndex && p.Table == deployments.Table {
					t.Fatalf("a user's change conditioned on the deployment's modify index: %+v", dec.Preconditions)
				}
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

const revertHCL = `job "web" {
  update {
    max_parallel      = 1
    canary            = 1
    auto_revert       = true
    progress_deadline = "10m"
  }
  group "web" {
    count = 2
    task "t" {
      driver = "exec"
      config { command = "/bin/sleep" }
    }
  }
}`

// history is a store holding job web at versions 0 (deployed
// successfully) and 1 (deploying), as registration leaves it.
type history struct {
	t     *testing.T
	f     *fsm.FSM
	index uint64
	v0    events.Job
}

func newHistory(t *testing.T) *history {
	h := &history{t: t, f: pt.NewFSM(t, pt.OpenStore(t))}
	j, err := jobspec.ParseHCL("web.hcl", []byte(revertHCL))
	if err != nil {
		t.Fatal(err)
	}
	h.v0 = *j
	v1 := *j
	v1.Version = 1
	v1.TaskGroups = []events.TaskGroup{j.TaskGroups[0]}
	v1.TaskGroups[0].Tasks = []events.Task{j.TaskGroups[0].Tasks[0]}
	v1.TaskGroups[0].Tasks[0].Config = events.TaskConfig{"command": "/bin/false"}
	h.apply(&events.JobRegistered{Job: h.v0}, &events.DeploymentUpserted{Deployment: events.Deployment{
		ID: "d0", Namespace: "default", JobID: "web", JobVersion: 0, Status: events.DeploymentStatusSuccessful,
		TaskGroups: map[string]*events.DeploymentState{"web": {DesiredTotal: 2, AutoRevert: true}}}})
	h.apply(&events.JobRegistered{Job: v1}, &events.DeploymentUpserted{Deployment: events.Deployment{
		ID: "d1", Namespace: "default", JobID: "web", JobVersion: 1, Status: events.DeploymentStatusRunning,
		TaskGroups: map[string]*events.DeploymentState{"web": {DesiredTotal: 2, AutoRevert: true, DesiredCanaries: 1}}}})
	return h
}

func (h *history) apply(ps ...events.Payload) {
	h.index++
	pt.ApplyOne(h.t, h.f, h.index, pt.Entry(h.t, "", ps...))
}

func (h *history) view() projections.View { return projections.NewView(h.f.Store()) }

// TestFailRevertsToStableVersion: failing a deployment of a group with
// auto_revert registers the latest version whose deployment succeeded
// again, as a new version, in the same entry (Nomad's Deployment.Fail).
func TestFailRevertsToStableVersion(t *testing.T) {
	h := newHistory(t)
	now := time.Unix(0, pt.LeaderTime)
	n := 0
	ids := func() string { n++; return "id-" + string(rune('0'+n)) }
	dec, err := deployment.Fail{ID: "d1"}.Decide(h.view(), now, ids)
	if err != nil {
		t.Fatal(err)
	}
	up := dec.Events[0].(*events.DeploymentStatusUpdated)
	if up.Status != events.DeploymentStatusFailed || up.StatusDescription != "Deployment marked as failed - rolling back to job version 0" {
		t.Fatalf("status update %+v", up)
	}
	var reg *events.JobRegistered
	for _, ev := range dec.Events {
		if r, ok := ev.(*events.JobRegistered); ok {
			reg = r
		}
	}
	if reg == nil || reg.Job.Version != 2 || reg.Job.TaskGroups[0].Tasks[0].Config["command"] != "/bin/sleep" {
		t.Fatalf("no revert to version 0's spec as version 2: %+v", dec.Events)
	}
	// The registration's own eval moves the scheduler; no second one.
	evals := 0
	for _, ev := range dec.Events {
		if _, ok := ev.(*events.EvalsUpserted); ok {
			evals++
		}
	}
	if evals != 1 {
		t.Fatalf("%d evals in %+v", evals, dec.Events)
	}
	h.apply(dec.Events...)

	// Version 2 is version 0 again: failing its deployment would revert to
	// the same spec, so it does not.
	st, ok, err := deployment.StableVersion(h.view(), &events.Deployment{Namespace: "default", JobID: "web", JobVersion: 2})
	if err != nil || !ok || st.Version != 0 {
		t.Fatalf("stable version %+v %v %v", st, ok, err)
	}
}

func TestRevert(t *testing.T) {
	now := time.Unix(0, pt.LeaderTime)
	ids := func() string { return "id" }
	for _, tc := range []struct {
		name     string
		setup    func(h *history) *events.Deployment
		rollback bool
		desc     string
		reverts  bool
	}{
		{"no rollback asked", func(h *history) *events.Deployment { return d1(h) }, false, "base", false},
		{"to the stable version", func(h *history) *events.Deployment { return d1(h) }, true, "base - rolling back to job version 0", true},
		{"no stable version", func(h *history) *events.Deployment {
			h.apply(&events.DeploymentStatusUpdated{ID: "d0", Status: events.DeploymentStatusFailed})
			return d1(h)
		}, true, "base - no stable job version to auto revert to", false},
		{"same spec", func(h *history) *events.Deployment {
			v2 := h.v0
			v2.Version = 2
			h.apply(&events.JobRegistered{Job: v2})
			return &events.Deployment{ID: "d2", Namespace: "default", JobID: "web", JobVersion: 2}
		}, true, "base - not rolling back to stable job version 0 as current job has same specification", false},
		{"job changed since", func(h *history) *events.Deployment {
			d := d1(h)
			d.JobVersion = 0
			return d
		}, true, "base", false},
		{"job stopped", func(h *history) *events.Deployment {
			h.apply(&events.JobDeregistered{Namespace: "default", ID: "web"})
			return d1(h)
		}, true, "base", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHistory(t)
			d := tc.setup(h)
			desc, dec, err := deployment.Revert(h.view(), d, "base", tc.rollback, now, ids)
			if err != nil {
				t.Fatal(err)
			}
			if desc != tc.desc || (len(dec.Events) > 0) != tc.reverts {
				t.Fatalf("Revert = %q, %+v", desc, dec.Events)
			}
		})
	}
}

func d1(h *history) *events.Deployment {
	return &events.Deployment{ID: "d1", Namespace: "default", JobID: "web", JobVersion: 1}
}
