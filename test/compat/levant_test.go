package compat

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"

	"github.com/ordoplane/ordo/test/testagent"
)

// levantDeploymentID does what Levant does after registering a job: it
// reads the register eval until the scheduler has recorded the deployment
// it acted under on it (Evaluation.DeploymentID).
func levantDeploymentID(t *testing.T, c *api.Client, evalID string) string {
	t.Helper()
	var id string
	testagent.WaitFor(t, guard, "the eval's DeploymentID", func() bool {
		ev, _, err := c.Evaluations().Info(evalID, nil)
		if err != nil {
			t.Fatal(err)
		}
		id = ev.DeploymentID
		return id != ""
	})
	return id
}

// levantWatch does what Levant does next: blocking reads of the
// deployment until it ends, and the allocations of a deployment that did
// not succeed, to report why.
func levantWatch(t *testing.T, c *api.Client, id string) *api.Deployment {
	t.Helper()
	var index uint64
	deadline := time.Now().Add(guard)
	for {
		d, qm, err := c.Deployments().Info(id, &api.QueryOptions{WaitIndex: index, WaitTime: 2 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		switch d.Status {
		case "successful", "failed", "cancelled":
			return d
		}
		index = qm.LastIndex
		if time.Now().After(deadline) {
			t.Fatalf("deployment %s still %s: %s", id, d.Status, d.StatusDescription)
		}
	}
}

// Levant's deploy, and what the Terraform provider reads, with the real
// nomad/api client: register, read the eval until it names its
// deployment, watch the deployment to successful, list its allocations.
// A second version changing only the job's meta is planned and deployed
// as a destructive update (NOMAD_META_* reaches the task).
func TestLevantDeploy(t *testing.T) {
	a, c := startDev(t)
	for i := range 2 {
		registerReadyNode(t, a.HTTPAddr(), fmt.Sprintf("node-%d", i), 4000, 8192)
	}
	fc := &fakeClient{t: t, c: c, addr: a.HTTPAddr(), job: "levant"}
	update := &api.UpdateStrategy{MaxParallel: pointer(1), MinHealthyTime: pointer(time.Second),
		HealthyDeadline: pointer(time.Minute), ProgressDeadline: pointer(10 * time.Minute)}
	job := deployJob("levant", 2, "1000", update)
	job.Meta = map[string]string{"release": "1"}

	var deps []string
	for version, release := range []string{"1", "2"} {
		job.Meta["release"] = release
		if version == 1 {
			plan, _, err := c.Jobs().Plan(job, true, nil)
			if err != nil {
				t.Fatal(err)
			}
			if u := plan.Annotations.DesiredTGUpdates["web"]; u == nil || u.DestructiveUpdate != 2 || u.InPlaceUpdate != 0 {
				t.Fatalf("plan of a job meta change: %+v", u)
			}
		}
		resp, _, err := c.Jobs().Register(job, nil)
		if err != nil {
			t.Fatal(err)
		}
		id := levantDeploymentID(t, c, resp.EvalID)
		deps = append(deps, id)
		d, _, err := c.Deployments().Info(id, nil)
		if err != nil {
			t.Fatal(err)
		}
		info, _, err := c.Jobs().Info("levant", nil)
		if err != nil {
			t.Fatal(err)
		}
		g := d.TaskGroups["web"]
		if d.JobVersion != uint64(version) || d.JobModifyIndex == 0 || d.JobModifyIndex != *info.JobModifyIndex ||
			d.JobSpecModifyIndex != *info.JobModifyIndex || d.JobCreateIndex != *info.CreateIndex ||
			g == nil || g.DesiredTotal != 2 || g.ProgressDeadline != 10*time.Minute || g.AutoRevert {
			t.Fatalf("version %d: deployment %+v group %+v; job modify %d create %d", version, d, g, *info.JobModifyIndex, *info.CreateIndex)
		}

		// The client reports each new allocation healthy, max_parallel
		// at a time, until the deployment ends.
		for {
			list := fc.waitAllocs("a new allocation, or all", func(l []*api.AllocationListStub) bool {
				return len(waitingAt(l, uint64(version))) > 0 || byVersion(l)[uint64(version)] == 2
			})
			w := waitingAt(list, uint64(version))
			if len(w) == 0 {
				break
			}
			fc.report(w[0], true)
		}
		d = levantWatch(t, c, id)
		if d.Status != "successful" || d.TaskGroups["web"].HealthyAllocs != 2 || d.TaskGroups["web"].PlacedAllocs != 2 {
			t.Fatalf("version %d: deployment %+v group %+v", version, d, d.TaskGroups["web"])
		}

		allocs, qm, err := c.Deployments().Allocations(id, nil)
		if err != nil || qm.LastIndex == 0 {
			t.Fatalf("deployment allocations: %v (index %d)", err, qm.LastIndex)
		}
		var got, want []string
		for _, x := range allocs {
			got = append(got, x.ID)
			if x.JobVersion != uint64(version) || !isHealthy(x) {
				t.Fatalf("an allocation of deployment %s: %+v", id, x)
			}
		}
		for _, x := range live(fc.waitAllocs("allocations", func([]*api.AllocationListStub) bool { return true })) {
			want = append(want, x.ID)
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("deployment %s allocations %v, want the job's live %v", id, got, want)
		}
	}
	if deps[0] == deps[1] {
		t.Fatalf("both versions deployed by %s", deps[0])
	}
	if _, _, err := c.Deployments().Allocations("no-such-deployment", nil); err == nil {
		t.Fatal("allocations of an unknown deployment answered")
	}
}

// waitingAt returns the live allocations of version not yet reported
// healthy.
func waitingAt(list []*api.AllocationListStub, version uint64) []*api.AllocationListStub {
	var out []*api.AllocationListStub
	for _, a := range live(list) {
		if a.JobVersion == version && !isHealthy(a) {
			out = append(out, a)
		}
	}
	return out
}

// A user's pause, resume and fail, each right after the one before, while
// the deployment watcher records the deployment's progress: every one
// applies (the watcher's bookkeeping never turns a user's change into a
// 409) and the deployment ends failed, as the user asked. Fifteen rounds:
// the modify-index precondition this guards against failed one within a
// few (forty cost 3 CPU-s of make test).
func TestFailRightAfterResumeWithWatcher(t *testing.T) {
	a, c := startDev(t)
	for i := range 2 {
		registerReadyNode(t, a.HTTPAddr(), fmt.Sprintf("node-%d", i), 4000, 8192)
	}
	update := &api.UpdateStrategy{MaxParallel: pointer(1), MinHealthyTime: pointer(time.Second),
		HealthyDeadline: pointer(time.Minute), ProgressDeadline: pointer(10 * time.Minute)}
	for i := range 15 {
		resp, _, err := c.Jobs().Register(deployJob("loop", 2, fmt.Sprint(1000+i), update), nil)
		if err != nil {
			t.Fatal(err)
		}
		id := levantDeploymentID(t, c, resp.EvalID)
		if _, _, err := c.Deployments().Pause(id, true, nil); err != nil {
			t.Fatalf("round %d: pause: %v", i, err)
		}
		if _, _, err := c.Deployments().Pause(id, false, nil); err != nil {
			t.Fatalf("round %d: resume: %v", i, err)
		}
		out, _, err := c.Deployments().Fail(id, nil)
		if err != nil {
			t.Fatalf("round %d: fail right after resume: %v", i, err)
		}
		d, _, err := c.Deployments().Info(id, &api.QueryOptions{WaitIndex: out.DeploymentModifyIndex - 1})
		if err != nil || d.Status != "failed" || d.StatusDescription != "Deployment marked as failed" {
			t.Fatalf("round %d: after the fail: %+v, %v", i, d, err)
		}
	}
}
