package job_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/commandstest"
	"github.com/ordoplane/ordo/commands/job"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections/jobs"
)

func TestLaunchPeriodic(t *testing.T) {
	c := newCluster(t)
	parent := parse(t, spec("batch", `periodic {
    crons            = ["*/5 * * * *"]
    prohibit_overlap = true
  }`, 1))
	c.run(&job.Register{Job: parent})
	launch := time.Date(2024, 1, 5, 10, 15, 0, 0, time.UTC)

	cmd := &job.LaunchPeriodic{Namespace: "default", ID: "web", Launch: launch}
	dec := c.run(cmd)
	if got := types(dec); !reflect.DeepEqual(got, []string{"JobRegistered", "EvalsUpserted"}) {
		t.Fatalf("events = %v", got)
	}
	r := cmd.Result()
	if r.JobID != "web/periodic-1704449700" || r.EvalID == "" || r.Skipped {
		t.Fatalf("result = %+v", r)
	}
	child := c.job("default", r.JobID)
	if child.ParentID != "web" || child.Periodic != nil || child.Name != r.JobID || child.Version != 0 {
		t.Fatalf("child = %+v", child.Job)
	}
	if ev := dec.Events[1].(*events.EvalsUpserted).Evals[0]; ev.TriggeredBy != events.EvalTriggerPeriodicJob || ev.JobID != r.JobID {
		t.Fatalf("eval = %+v", ev)
	}
	if sum, _ := jobs.GetSummary(c.View(), "default", "web"); sum.Children == nil || sum.Children.Pending != 1 {
		t.Fatalf("parent summary = %+v", sum)
	}

	// The same launch again (forced past the overlap check): the child
	// exists, 409.
	if _, err := c.decide(&job.LaunchPeriodic{Namespace: "default", ID: "web", Launch: launch, Force: true}); commands.Status(err) != 409 {
		t.Fatalf("repeated launch: %v", err)
	}
	// The next launch overlaps a pending child: skipped, nothing decided.
	next := &job.LaunchPeriodic{Namespace: "default", ID: "web", Launch: launch.Add(5 * time.Minute)}
	if dec, err := c.decide(next); err != nil || len(dec.Events) != 0 || !next.Result().Skipped ||
		next.Result().Running != r.JobID {
		t.Fatalf("overlapping launch: %+v %+v %v", dec, next.Result(), err)
	}
	// Forced, it goes ahead; with no launch time it takes the leader time.
	force := &job.LaunchPeriodic{Namespace: "default", ID: "web", Force: true}
	c.run(force)
	if got := force.Result().JobID; got != job.PeriodicChildID("web", now) {
		t.Fatalf("forced child = %q", got)
	}

	// Not periodic, stopped, missing.
	c.run(&job.Register{Job: parse(t, spec("batch", "", 1))})
	if _, err := c.decide(&job.LaunchPeriodic{Namespace: "default", ID: "web"}); commands.Status(err) != 400 {
		t.Fatalf("launch of a non-periodic job: %v", err)
	}
	if _, err := c.decide(&job.LaunchPeriodic{Namespace: "default", ID: "nope"}); commands.Status(err) != 404 {
		t.Fatalf("launch of a missing job: %v", err)
	}
	commandstest.WantField(t, (&job.LaunchPeriodic{Namespace: "default"}).Validate(), "id")
}
