package periodic_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/job"
	"github.com/ordoplane/ordo/commands/job/jobspec"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/processors/periodic"
	"github.com/ordoplane/ordo/processors/supervisor"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/evals"
	"github.com/ordoplane/ordo/projections/fsm"
	"github.com/ordoplane/ordo/projections/jobs"
	pt "github.com/ordoplane/ordo/projections/projectionstest"
	"github.com/ordoplane/ordo/storage/kv"
)

var discard = slog.New(slog.NewTextHandler(io.Discard, nil))

// fsmPipeline is a Submitter that decides commands on the store at the
// (bubble's) current time and applies them through the FSM, as the
// pipeline does on a leader.
type fsmPipeline struct {
	t     *testing.T
	store *kv.Store
	fsm   *fsm.FSM

	mu    sync.Mutex
	index uint64
	ids   int
	runs  int
}

func newPipeline(t *testing.T) *fsmPipeline {
	store := pt.OpenStore(t)
	return &fsmPipeline{t: t, store: store, fsm: pt.NewFSM(t, store)}
}

func (p *fsmPipeline) Run(_ context.Context, _ string, _ commands.Request, c commands.Command) (commands.Outcome, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.runs++
	if err := c.Validate(); err != nil {
		return commands.Outcome{}, err
	}
	snap := p.store.Snapshot()
	dec, err := c.Decide(projections.NewView(snap), time.Now(), func() string { p.ids++; return fmt.Sprintf("id-%d", p.ids) })
	snap.Close()
	if err != nil || len(dec.Events) == 0 {
		return commands.Outcome{Index: p.index}, err
	}
	p.index++
	e := pt.Entry(p.t, fmt.Sprintf("c%d", p.index), dec.Events...)
	e.Preconditions = dec.Preconditions
	if res := pt.ApplyOne(p.t, p.fsm, p.index, e); res.Err != nil {
		return commands.Outcome{}, res.Err
	}
	return commands.Outcome{Index: p.index}, nil
}

func (p *fsmPipeline) ReadSnapshot() *kv.Snapshot      { return p.store.Snapshot() }
func (p *fsmPipeline) Notifier() *projections.Notifier { return p.fsm.Notifier() }

func (p *fsmPipeline) run(c commands.Command) {
	p.t.Helper()
	if _, err := p.Run(context.Background(), "test", commands.Request{}, c); err != nil {
		p.t.Fatal(err)
	}
}

// children returns the ids of parent's children, oldest first.
func (p *fsmPipeline) children(parent string) []*jobs.Stub {
	p.t.Helper()
	snap := p.store.Snapshot()
	defer snap.Close()
	list, err := jobs.List(projections.NewView(snap), "default", parent+job.PeriodicChildPrefix)
	if err != nil {
		p.t.Fatal(err)
	}
	return list
}

func periodicJob(t *testing.T, extra string) events.Job {
	t.Helper()
	j, err := jobspec.ParseHCL("report.hcl", fmt.Appendf(nil, `job "report" {
  type = "batch"
  periodic {
    crons = ["*/15 * * * *"]
%s
  }
  group "g" {
    task "t" {
      driver = "exec"
      config { command = "/bin/true" }
    }
  }
}`, extra))
	if err != nil {
		t.Fatal(err)
	}
	return *j
}

// start runs a launcher over p until the test ends.
func start(t *testing.T, p *fsmPipeline) {
	l, err := periodic.New(periodic.Config{Pipeline: p, State: p, Logger: discard})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- l.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("Run = %v", err)
		}
	})
}

// The bubble's clock starts at 2000-01-01T00:00:00Z.
var quarterPast = time.Date(2000, 1, 1, 0, 15, 0, 0, time.UTC)

func TestLaunchCreatesChildAndEval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newPipeline(t)
		p.run(&job.Register{Job: periodicJob(t, "")})
		start(t, p)
		synctest.Wait()
		if c := p.children("report"); len(c) != 0 {
			t.Fatalf("launched before time: %+v", c)
		}
		time.Sleep(time.Until(quarterPast))
		synctest.Wait()
		c := p.children("report")
		want := fmt.Sprintf("report/periodic-%d", quarterPast.Unix())
		if len(c) != 1 || c[0].ID != want || c[0].ParentID != "report" || c[0].Periodic || c[0].Status != jobs.StatusPending {
			t.Fatalf("children = %+v", c)
		}
		snap := p.store.Snapshot()
		defer snap.Close()
		v := projections.NewView(snap)
		child, err := jobs.Get(v, "default", want)
		if err != nil || child.Periodic != nil || child.SubmitTime != quarterPast.UnixNano() {
			t.Fatalf("child = %+v, %v", child, err)
		}
		var found []events.Evaluation
		err = evals.Scan(v, evals.Query{}, func(e *evals.Eval) error {
			found = append(found, e.Evaluation)
			return nil
		})
		if err != nil || len(found) != 1 || found[0].JobID != want || found[0].TriggeredBy != events.EvalTriggerPeriodicJob ||
			found[0].Status != events.EvalStatusPending {
			t.Fatalf("evals = %+v, %v", found, err)
		}
		// And again a quarter later: overlap is allowed.
		time.Sleep(15 * time.Minute)
		synctest.Wait()
		if c := p.children("report"); len(c) != 2 {
			t.Fatalf("children after two launches = %+v", c)
		}
	})
}

func TestProhibitOverlapSkips(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newPipeline(t)
		p.run(&job.Register{Job: periodicJob(t, "prohibit_overlap = true")})
		start(t, p)
		time.Sleep(time.Until(quarterPast))
		synctest.Wait()
		first := p.children("report")
		if len(first) != 1 {
			t.Fatalf("children = %+v", first)
		}
		// The first child is still pending: the next launch is skipped.
		time.Sleep(15 * time.Minute)
		synctest.Wait()
		if c := p.children("report"); len(c) != 1 {
			t.Fatalf("launched over a pending child: %+v", c)
		}
		// Once it is stopped, the next launch goes ahead.
		p.run(&job.Deregister{Namespace: "default", ID: first[0].ID})
		time.Sleep(15 * time.Minute)
		synctest.Wait()
		c := p.children("report")
		if want := fmt.Sprintf("report/periodic-%d", quarterPast.Add(30*time.Minute).Unix()); len(c) != 2 || c[1].ID != want {
			t.Fatalf("children = %+v, want a second one %s", c, want)
		}
	})
}

func TestSpecChangeReschedulesAndStopDrops(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newPipeline(t)
		p.run(&job.Register{Job: periodicJob(t, "")})
		start(t, p)
		synctest.Wait()
		hourly := periodicJob(t, "")
		hourly.Periodic.Specs = []string{"@hourly"}
		p.run(&job.Register{Job: hourly})
		time.Sleep(30 * time.Minute)
		synctest.Wait()
		if c := p.children("report"); len(c) != 0 {
			t.Fatalf("launched on the old schedule: %+v", c)
		}
		time.Sleep(30 * time.Minute)
		synctest.Wait()
		if c := p.children("report"); len(c) != 1 {
			t.Fatalf("children = %+v", c)
		}
		p.run(&job.Deregister{Namespace: "default", ID: "report"})
		time.Sleep(2 * time.Hour)
		synctest.Wait()
		if c := p.children("report"); len(c) != 1 {
			t.Fatalf("a stopped job launched: %+v", c)
		}
	})
}

// TestOnlyWhileLeading runs the launcher under the supervisor: nothing
// launches until leadership is gained, and nothing after it is lost.
func TestOnlyWhileLeading(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newPipeline(t)
		p.run(&job.Register{Job: periodicJob(t, "")})
		l, err := periodic.New(periodic.Config{Pipeline: p, State: p, Logger: discard})
		if err != nil {
			t.Fatal(err)
		}
		sup, err := supervisor.New(supervisor.Config{Logger: discard}, l)
		if err != nil {
			t.Fatal(err)
		}
		changes := make(chan bool)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- sup.Run(ctx, changes) }()

		time.Sleep(time.Hour)
		synctest.Wait()
		if c := p.children("report"); len(c) != 0 || p.runs != 1 {
			t.Fatalf("launched while not leading: %+v", c)
		}
		changes <- true
		time.Sleep(15 * time.Minute)
		synctest.Wait()
		if c := p.children("report"); len(c) != 1 {
			t.Fatalf("children while leading = %+v", c)
		}
		changes <- false
		time.Sleep(time.Hour)
		synctest.Wait()
		if c := p.children("report"); len(c) != 1 {
			t.Fatalf("launched after losing leadership: %+v", c)
		}
		cancel()
		<-done
	})
}

// TestRelaunchIsIdempotent decides the same launch twice, as a new leader
// repeating an old one would: one child.
func TestRelaunchIsIdempotent(t *testing.T) {
	p := newPipeline(t)
	p.run(&job.Register{Job: periodicJob(t, "")})
	launch := time.Date(2024, 1, 5, 10, 15, 0, 0, time.UTC)
	p.run(&job.LaunchPeriodic{Namespace: "default", ID: "report", Launch: launch})
	_, err := p.Run(context.Background(), "test", commands.Request{}, &job.LaunchPeriodic{Namespace: "default", ID: "report", Launch: launch})
	if commands.Status(err) != 409 {
		t.Fatalf("second launch: %v", err)
	}
	if c := p.children("report"); len(c) != 1 {
		t.Fatalf("children = %+v", c)
	}
}

func TestConfig(t *testing.T) {
	if _, err := periodic.New(periodic.Config{}); err == nil {
		t.Fatal("New without a pipeline succeeded")
	}
}
