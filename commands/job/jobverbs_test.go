package job_test

import (
	"errors"
	"reflect"
	"regexp"
	"testing"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/job"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections/allocs"
	"github.com/ordoplane/ordo/projections/jobs"
	"github.com/ordoplane/ordo/projections/scaling"
)

func field(err error) string {
	var ve *commands.ValidationError
	if errors.As(err, &ve) {
		return ve.Field
	}
	return ""
}

// TestEvaluate: a new evaluation at the job's current JobModifyIndex; with
// ForceReschedule the failed allocations are marked in the same entry;
// periodic jobs are refused.
func TestEvaluate(t *testing.T) {
	c := newCluster(t)
	c.run(&job.Register{Job: service(t, 2)})
	mk := func(id, client string) events.Allocation {
		return events.Allocation{ID: id, Namespace: "default", JobID: "web", TaskGroup: "g", Name: "web.g[0]",
			NodeID: "n1", DesiredStatus: events.AllocDesiredRun, ClientStatus: client}
	}
	c.Apply(commands.Decision{Events: []events.Payload{&events.AllocsPlaced{EvalID: "e", Allocs: []events.Allocation{
		mk("a-failed", events.AllocClientFailed), mk("a-running", events.AllocClientRunning)}}}})
	j := c.job("default", "web")

	ev := &job.Evaluate{Namespace: "default", ID: "web"}
	dec := c.run(ev)
	if got := types(dec); !reflect.DeepEqual(got, []string{"EvalsUpserted"}) {
		t.Fatalf("events = %v", got)
	}
	e := dec.Events[0].(*events.EvalsUpserted).Evals[0]
	if e.ID != ev.Result().EvalID || e.JobModifyIndex != j.JobModifyIndex || e.TriggeredBy != events.EvalTriggerJobRegister {
		t.Fatalf("eval = %+v", e)
	}

	dec = c.run(&job.Evaluate{Namespace: "default", ID: "web", ForceReschedule: true})
	if got := types(dec); !reflect.DeepEqual(got, []string{"AllocsDesiredUpdated", "EvalsUpserted"}) {
		t.Fatalf("force reschedule events = %v", got)
	}
	a, err := allocs.Get(c.View(), "a-failed")
	if err != nil || a.DesiredTransition.ForceReschedule == nil || !*a.DesiredTransition.ForceReschedule {
		t.Fatalf("failed alloc after force reschedule: %+v, %v", a, err)
	}
	if up := dec.Events[0].(*events.AllocsDesiredUpdated).Updates; len(up) != 1 {
		t.Fatalf("marked %d allocations, want the failed one", len(up))
	}

	c.run(&job.Register{Job: parse(t, spec("batch", `periodic { crons = ["@daily"] }`, 1))})
	if _, err := c.decide(&job.Evaluate{Namespace: "default", ID: "web"}); field(err) != "id" {
		t.Fatalf("evaluate a periodic job: %v", err)
	}
	if _, err := c.decide(&job.Evaluate{Namespace: "default", ID: "nope"}); !errors.As(err, new(*commands.NotFoundError)) {
		t.Fatalf("evaluate a missing job: %v", err)
	}
}

// TestRevert registers a prior version's spec again as a new version;
// EnforcePriorVersion is a check-and-set on the current version.
func TestRevert(t *testing.T) {
	c := newCluster(t)
	c.run(&job.Register{Job: service(t, 2)})
	c.run(&job.Register{Job: service(t, 5)})
	if j := c.job("default", "web"); j.Version != 1 || j.TaskGroups[0].Count != 5 {
		t.Fatalf("job before revert: %+v", j)
	}
	wrong := uint64(0)
	_, err := c.decide(&job.Revert{Namespace: "default", ID: "web", Version: 0, EnforcePriorVersion: &wrong})
	if !errors.As(err, new(*commands.ConflictError)) {
		t.Fatalf("revert enforcing version 0 of a job at 1: %v", err)
	}
	if _, err := c.decide(&job.Revert{Namespace: "default", ID: "web", Version: 1}); field(err) != "JobVersion" {
		t.Fatalf("revert to the current version: %v", err)
	}
	if _, err := c.decide(&job.Revert{Namespace: "default", ID: "web", Version: 7}); !errors.As(err, new(*commands.NotFoundError)) {
		t.Fatalf("revert to a missing version: %v", err)
	}

	prior := uint64(1)
	rv := &job.Revert{Namespace: "default", ID: "web", Version: 0, EnforcePriorVersion: &prior}
	dec := c.run(rv)
	if got := types(dec); !reflect.DeepEqual(got, []string{"JobRegistered", "EvalsUpserted", "DeploymentUpserted"}) {
		t.Fatalf("events = %v", got)
	}
	j := c.job("default", "web")
	if j.Version != 2 || j.TaskGroups[0].Count != 2 || j.JobModifyIndex != c.Index || !rv.Result().Changed || rv.Result().EvalID == "" {
		t.Fatalf("reverted job = %+v, result %+v", j, rv.Result())
	}
}

// TestStability marks a kept version stable and back; a missing version
// is not found.
func TestStability(t *testing.T) {
	c := newCluster(t)
	c.run(&job.Register{Job: service(t, 2)})
	c.run(&job.Register{Job: service(t, 3)})
	stable := func(v uint64) bool {
		vs, err := jobs.Versions(c.View(), "default", "web")
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range vs {
			if j.Version == v {
				return j.Stable
			}
		}
		t.Fatalf("no version %d", v)
		return false
	}
	c.run(&job.Stability{Namespace: "default", ID: "web", Version: 0, Stable: true})
	if !stable(0) || stable(1) {
		t.Fatalf("after marking version 0: stable(0)=%v stable(1)=%v", stable(0), stable(1))
	}
	c.run(&job.Stability{Namespace: "default", ID: "web", Version: 1, Stable: true})
	if j := c.job("default", "web"); !j.Stable {
		t.Fatalf("current version marked stable, job reads %+v", j.Stable)
	}
	c.run(&job.Stability{Namespace: "default", ID: "web", Version: 0, Stable: false})
	if stable(0) {
		t.Fatal("version 0 still stable after unmarking")
	}
	if _, err := c.decide(&job.Stability{Namespace: "default", ID: "web", Version: 9}); !errors.As(err, new(*commands.NotFoundError)) {
		t.Fatalf("stability of a missing version: %v", err)
	}
}

// TestScale changes a group's count (a new version, an evaluation and a
// scaling event in one entry) or records a message alone; the scaling
// block bounds the count.
func TestScale(t *testing.T) {
	c := newCluster(t)
	c.run(&job.Register{Job: parse(t, `job "web" {
  group "g" {
    count = 2
    scaling {
      min = 1
      max = 4
    }
    task "t" {
      driver = "exec"
    }
  }
}`)})
	before := c.job("default", "web")
	n := int64(3)
	sc := &job.Scale{Namespace: "default", ID: "web", Group: "g", Count: &n, Message: "by hand",
		Meta: map[string]any{"who": "ops"}}
	dec := c.run(sc)
	if got := types(dec); !reflect.DeepEqual(got, []string{"JobRegistered", "EvalsUpserted", "DeploymentUpserted", "JobScaled"}) {
		t.Fatalf("events = %v", got)
	}
	j := c.job("default", "web")
	if j.Version != before.Version+1 || j.TaskGroups[0].Count != 3 || sc.Result().EvalID == "" {
		t.Fatalf("scaled job = %+v, result %+v", j, sc.Result())
	}
	evs, err := scaling.Events(c.View(), "default", "web")
	if err != nil {
		t.Fatal(err)
	}
	want := scaling.Event{ScalingEvent: events.ScalingEvent{Count: &n, PreviousCount: 2, Message: "by hand",
		Meta: events.TaskConfig{"who": "ops"}, EvalID: sc.Result().EvalID, Time: now.UnixNano()}, CreateIndex: c.Index}
	if len(evs["g"]) != 1 || !reflect.DeepEqual(evs["g"][0], want) {
		t.Fatalf("scaling events = %+v, want %+v", evs, want)
	}

	// A message alone: the event, nothing else.
	dec = c.run(&job.Scale{Namespace: "default", ID: "web", Group: "g", Error: true, Message: "metrics unavailable"})
	if got := types(dec); !reflect.DeepEqual(got, []string{"JobScaled"}) {
		t.Fatalf("message-only events = %v", got)
	}
	if evs, _ := scaling.Events(c.View(), "default", "web"); len(evs["g"]) != 2 || !evs["g"][0].Error {
		t.Fatalf("events after the error: %+v", evs)
	}

	big, neg := int64(5), int64(-1)
	for _, bad := range []struct {
		cmd   *job.Scale
		field string
	}{
		{&job.Scale{Namespace: "default", ID: "web", Group: "g", Count: &big}, "Count"},
		{&job.Scale{Namespace: "default", ID: "web", Group: "g", Count: &neg}, "Count"},
		{&job.Scale{Namespace: "default", ID: "web", Group: "g", Count: &n, Error: true}, "Count"},
		{&job.Scale{Namespace: "default", ID: "web", Group: "nope", Count: &n}, "Target.Group"},
		{&job.Scale{Namespace: "default", ID: "web", Count: &n}, "Target.Group"},
	} {
		if _, err := c.decide(bad.cmd); field(err) != bad.field {
			t.Errorf("scale %+v: %v, want a ValidationError naming %s", bad.cmd, err, bad.field)
		}
	}
	if _, err := c.decide(&job.Scale{Namespace: "default", ID: "web", Group: "g", Count: &n, JobModifyIndex: 1}); !errors.As(err, new(*commands.ConflictError)) {
		t.Fatalf("scale enforcing a stale index: %v", err)
	}

	// Purging the job drops its scaling events.
	c.run(&job.Deregister{Namespace: "default", ID: "web", Purge: true})
	if evs, err := scaling.Events(c.View(), "default", "web"); err != nil || len(evs) != 0 {
		t.Fatalf("events of a purged job: %+v, %v", evs, err)
	}
}

// TestDispatchIDPrefixTemplate: the template goes into the child's id
// after "dispatch-", as Nomad's id_prefix_template; one with a '/' is
// refused.
func TestDispatchIDPrefixTemplate(t *testing.T) {
	c := newCluster(t)
	c.run(&job.Register{Job: parse(t, spec("batch", `parameterized {}`, 1))})
	cmd := &job.Dispatch{Namespace: "default", ID: "web", IDPrefixTemplate: "nightly"}
	c.run(cmd)
	if id := cmd.Result().JobID; !regexp.MustCompile(`^web/dispatch-nightly-1700000000-[0-9a-f]{8}$`).MatchString(id) {
		t.Fatalf("child id %q", id)
	}
	if _, err := c.decide(&job.Dispatch{Namespace: "default", ID: "web", IDPrefixTemplate: "a/b"}); field(err) != "IdPrefixTemplate" {
		t.Fatalf("template with a slash: %v", err)
	}
}
