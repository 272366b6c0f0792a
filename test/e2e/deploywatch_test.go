// This file holds the end-to-end test of BEHAVIOURS.md N3 on a dev agent:
// a deployment created at registration starts initializing and the
// leader's deployment watcher moves it to pending in an entry of its own.
// (It lived in processors/deploywatch, whose test binary then linked a
// whole agent for this one test.)

package e2e

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ordoplane/ordo/commands"
	jobcmd "github.com/ordoplane/ordo/commands/job"
	"github.com/ordoplane/ordo/commands/job/jobspec"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/deployments"
	pt "github.com/ordoplane/ordo/projections/projectionstest"
	"github.com/ordoplane/ordo/test/testagent"
)

const deployWebHCL = `job "web" {
  update { max_parallel = 1 }
  group "g" {
    count = 2
    task "t" {
      driver = "exec"
      config { command = "/bin/sleep" }
    }
  }
}`

// TestDevAgentMovesDeploymentToPending registers a service job on a real
// dev agent: the deployment is appended initializing with the job (N3) and
// the leader's watcher then moves it to pending in a later entry.
func TestDevAgentMovesDeploymentToPending(t *testing.T) {
	a, _ := startAgent(t)
	testagent.WaitFor(t, 15*time.Second, "leadership", a.Node().IsLeader)

	spec, err := jobspec.ParseHCL("web.hcl", []byte(deployWebHCL))
	if err != nil {
		t.Fatal(err)
	}
	reg := &jobcmd.Register{Job: *spec}
	var out commands.Outcome
	testagent.WaitFor(t, 15*time.Second, "the registration", func() bool {
		out, err = a.Pipeline().Run(context.Background(), "job.register", commands.Request{}, reg)
		return err == nil
	})
	id := reg.Result().DeploymentID
	if id == "" {
		t.Fatal("no deployment created")
	}
	// Once pending, a scheduler may move it on, so wait for it to leave
	// initializing and read the archive for the move itself.
	testagent.WaitFor(t, 15*time.Second, "the deployment to leave initializing", func() bool {
		snap := a.Store().Snapshot()
		defer snap.Close()
		d, err := deployments.Get(projections.NewView(snap), id)
		if err != nil && !errors.Is(err, projections.ErrNotFound) {
			t.Fatal(err)
		}
		return d != nil && d.Status != events.DeploymentStatusInitializing
	})

	// The archive shows the order: created initializing with the job, then
	// moved by the watcher in an entry of its own.
	var created, moved *events.Event
	for _, ev := range pt.Archived(t, a.Store()) {
		if ev.Key(events.KindDeployment) != id {
			continue
		}
		p, err := events.Decode(ev)
		if err != nil {
			t.Fatal(err)
		}
		switch p := p.(type) {
		case *events.DeploymentUpserted:
			if created != nil {
				continue
			}
			if p.Deployment.Status != events.DeploymentStatusInitializing {
				t.Fatalf("deployment created %s", p.Deployment.Status)
			}
			created = ev
		case *events.DeploymentStatusUpdated:
			if moved != nil {
				continue
			}
			if p.Status != events.DeploymentStatusPending {
				t.Fatalf("first status update %+v", p)
			}
			moved = ev
		}
	}
	if created == nil || moved == nil || created.Index != out.Index || moved.Index <= created.Index ||
		moved.Actor != "system:deploywatch" {
		t.Fatalf("created %+v, moved %+v (registered at %d)", created, moved, out.Index)
	}
}
