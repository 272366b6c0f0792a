package deployment_test

import (
	"errors"
	"testing"
	"time"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/deployment"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections/deployments"
	pt "github.com/ordoplane/ordo/projections/projectionstest"
)

// TestProgress checks the watcher's command: it replaces the deployment
// decided on, only if unchanged since, asks for an eval, and reverts the
// job when a failed deployment says so.
func TestProgress(t *testing.T) {
	now := time.Unix(0, pt.LeaderTime+int64(time.Minute))
	ids := func() string { return "new-id" }
	h := newHistory(t)
	d, err := deployments.Get(h.view(), "d1")
	if err != nil {
		t.Fatal(err)
	}
	next := d.Deployment
	next.TaskGroups = map[string]*events.DeploymentState{"web": {DesiredTotal: 2, HealthyAllocs: 1, DesiredCanaries: 1}}
	next.CreateTime, next.JobVersion = 0, 9 // taken from the stored deployment

	t.Run("stale", func(t *testing.T) {
		_, err := deployment.Progress{Deployment: next, ModifyIndex: d.ModifyIndex - 1}.Decide(h.view(), now, ids)
		var ce *commands.ConflictError
		if !errors.As(err, &ce) {
			t.Fatalf("err = %v, want a conflict", err)
		}
	})
	t.Run("progress", func(t *testing.T) {
		dec, err := deployment.Progress{Deployment: next, ModifyIndex: d.ModifyIndex, Eval: true}.Decide(h.view(), now, ids)
		if err != nil {
			t.Fatal(err)
		}
		up := dec.Events[0].(*events.DeploymentUpserted).Deployment
		if up.ModifyTime != now.UnixNano() || up.CreateTime != d.CreateTime || up.JobVersion != 1 || up.TaskGroups["web"].HealthyAllocs != 1 {
			t.Fatalf("recorded %+v", up)
		}
		if len(dec.Events) != 2 || dec.Events[1].(*events.EvalsUpserted).Evals[0].DeploymentID != "d1" ||
			dec.Preconditions[0] != (events.Precondition{Table: deployments.Table, Key: "d1", Op: events.ModifyIndex, Index: d.ModifyIndex}) {
			t.Fatalf("decision %+v", dec)
		}
	})
	t.Run("failed with revert", func(t *testing.T) {
		failed := next
		failed.Status, failed.StatusDescription = events.DeploymentStatusFailed, "Failed due to unhealthy allocations"
		p := deployment.Progress{Deployment: failed, ModifyIndex: d.ModifyIndex, Eval: true, Revert: true}
		if err := p.Validate(); err != nil {
			t.Fatal(err)
		}
		dec, err := p.Decide(h.view(), now, ids)
		if err != nil {
			t.Fatal(err)
		}
		up := dec.Events[0].(*events.DeploymentUpserted).Deployment
		if up.StatusDescription != "Failed due to unhealthy allocations - rolling back to job version 0" {
			t.Fatalf("description %q", up.StatusDescription)
		}
		var kinds []string
		for _, p := range dec.Events {
			ev, err := events.New("x", p)
			if err != nil {
				t.Fatal(err)
			}
			kinds = append(kinds, ev.Type)
		}
		if len(kinds) != 4 || kinds[1] != "JobRegistered" || kinds[2] != "EvalsUpserted" || kinds[3] != "DeploymentUpserted" {
			t.Fatalf("events %v", kinds)
		}
	})
	t.Run("validate", func(t *testing.T) {
		if err := (deployment.Progress{Deployment: next, Revert: true}).Validate(); err == nil {
			t.Fatal("a revert of a running deployment validated")
		}
		bad := next
		bad.Status = events.DeploymentStatusInitializing
		if err := (deployment.Progress{Deployment: bad}).Validate(); err == nil {
			t.Fatal("the watcher recorded initializing")
		}
	})
}

// TestResumeRestartsProgressDeadline: no progress can be made while a
// deployment is paused, so resuming restarts its progress deadlines.
func TestResumeRestartsProgressDeadline(t *testing.T) {
	h := newHistory(t)
	h.apply(&events.DeploymentUpserted{Deployment: events.Deployment{ID: "d1", Namespace: "default", JobID: "web", JobVersion: 1,
		Status: events.DeploymentStatusPaused, TaskGroups: map[string]*events.DeploymentState{
			"web": {DesiredTotal: 2, RequireProgressBy: pt.LeaderTime}}}})
	now := time.Unix(0, pt.LeaderTime).Add(time.Hour)
	dec, err := deployment.Pause{ID: "d1"}.Decide(h.view(), now, func() string { return "e" })
	if err != nil {
		t.Fatal(err)
	}
	h.apply(dec.Events...)
	d, err := deployments.Get(h.view(), "d1")
	if err != nil || d.Status != events.DeploymentStatusRunning || d.TaskGroups["web"].RequireProgressBy != now.Add(10*time.Minute).UnixNano() ||
		d.TaskGroups["web"].DesiredTotal != 2 {
		t.Fatalf("resumed %+v %+v, %v", d, d.TaskGroups["web"], err)
	}
}
