package deploywatch_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/ordoplane/ordo/clock/clocktest"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/goleak"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/job"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/processors/deploywatch"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/deployments"
	"github.com/ordoplane/ordo/projections/jobs"
	pt "github.com/ordoplane/ordo/projections/projectionstest"
	"github.com/ordoplane/ordo/storage/kv"
	"github.com/ordoplane/ordo/storage/waittest"
)

// seed appends payloads as they are, standing in for the scheduler, the
// plan applier and the client.
type seed []events.Payload

func (seed) Validate() error { return nil }
func (s seed) Decide(projections.View, time.Time, commands.IDs) (commands.Decision, error) {
	return commands.Decision{Events: s}, nil
}

const revertingHCL = `job "web" {
  update {
    max_parallel      = 1
    min_healthy_time  = "1s"
    healthy_deadline  = "30s"
    progress_deadline = "1m"
    auto_revert       = true
  }
  group "web" {
    count = 2
    task "t" {
      driver = "exec"
      config { command = "%s" }
    }
  }
}`

// TestWatcherFollowsDeployments runs the watcher over a real pipeline and
// FSM with a fake clock: a registration's deployment goes initializing,
// pending (N3), running, and successful once the client reports its
// allocations healthy; the next version's deployment, making no progress,
// fails at its progress deadline and the job reverts to the version that
// succeeded. Metrics count the decisions; Run leaks no goroutine.
func TestWatcherFollowsDeployments(t *testing.T) {
	store := pt.OpenStore(t)
	f := pt.NewFSM(t, store)
	clock := clocktest.NewClock(time.Unix(1_700_000_000, 0))
	n := 0
	var idMu sync.Mutex
	pipe, err := commands.NewPipeline(commands.PipelineConfig{Log: &pt.FSMLog{FSM: f}, Store: store, Applied: f.Applied,
		Clock: clock, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		IDs: func() string { idMu.Lock(); defer idMu.Unlock(); n++; return fmt.Sprintf("id-%03d", n) }})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	register := func(cmd string) job.Result {
		t.Helper()
		r := &job.Register{Job: parse(t, fmt.Sprintf(revertingHCL, cmd))}
		if _, err := pipe.Run(ctx, "job.register", commands.Request{}, r); err != nil {
			t.Fatal(err)
		}
		return r.Result()
	}
	run := func(ps ...events.Payload) {
		t.Helper()
		if _, err := pipe.Run(ctx, "test.seed", commands.Request{}, seed(ps)); err != nil {
			t.Fatal(err)
		}
	}
	reg := prometheus.NewRegistry()
	w, err := deploywatch.New(deploywatch.Config{Pipeline: pipe, State: f, Clock: clock, Registerer: reg,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	before := goleak.IgnoreCurrent()
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- w.Run(wctx) }()
	defer func() {
		cancel()
		<-done
	}()

	d0 := register("/bin/sleep").DeploymentID
	waitFor(t, f.Notifier(), "the deployment running", func() bool {
		d := deployment(t, store, d0)
		return d.Status == events.DeploymentStatusRunning &&
			d.TaskGroups["web"].RequireProgressBy == clock.Now().Add(time.Minute).UnixNano()
	})
	yes := true
	placed := func(id string, version uint64, dep string) events.Allocation {
		return events.Allocation{ID: id, Namespace: "default", EvalID: "e", Name: "web.web[0]", NodeID: "n1", JobID: "web",
			JobVersion: version, TaskGroup: "web", DeploymentID: dep, DesiredStatus: events.AllocDesiredRun, ClientStatus: events.AllocClientPending}
	}
	run(&events.AllocsPlaced{EvalID: "e", Allocs: []events.Allocation{placed("a0", 0, d0), placed("a1", 0, d0)}})
	waitFor(t, f.Notifier(), "placements counted", func() bool { return deployment(t, store, d0).TaskGroups["web"].PlacedAllocs == 2 })
	clock.Advance(30 * time.Second)
	run(&events.AllocsClientUpdated{NodeID: "n1", Updates: []events.AllocClientUpdate{
		{ID: "a0", ClientStatus: events.AllocClientRunning, DeploymentStatus: &events.AllocDeploymentStatus{Healthy: &yes}},
		{ID: "a1", ClientStatus: events.AllocClientRunning, DeploymentStatus: &events.AllocDeploymentStatus{Healthy: &yes}}}})
	waitFor(t, f.Notifier(), "the deployment successful", func() bool {
		d := deployment(t, store, d0)
		return d.Status == events.DeploymentStatusSuccessful && d.TaskGroups["web"].HealthyAllocs == 2
	})

	// Version 1 places one allocation that never becomes healthy: past the
	// progress deadline the deployment fails and version 0 comes back.
	d1 := register("/bin/false").DeploymentID
	waitFor(t, f.Notifier(), "the next deployment running", func() bool {
		return deployment(t, store, d1).Status == events.DeploymentStatusRunning
	})
	run(&events.AllocsPlaced{EvalID: "e", Allocs: []events.Allocation{placed("b0", 1, d1)}})
	clock.Advance(59 * time.Second)
	waitFor(t, f.Notifier(), "the allocation counted", func() bool { return deployment(t, store, d1).TaskGroups["web"].PlacedAllocs == 1 })
	if d := deployment(t, store, d1); d.Status != events.DeploymentStatusRunning {
		t.Fatalf("failed before its deadline: %+v", d)
	}
	clock.Advance(time.Second)
	waitFor(t, f.Notifier(), "the deployment failed", func() bool {
		return deployment(t, store, d1).Status == events.DeploymentStatusFailed
	})
	if d := deployment(t, store, d1); d.StatusDescription != "Failed due to progress deadline - rolling back to job version 0" {
		t.Fatalf("failed %q", d.StatusDescription)
	}
	snap := store.Snapshot()
	j, err := jobs.Get(projections.NewView(snap), "default", "web")
	snap.Close()
	if err != nil || j.Version != 2 || j.TaskGroups[0].Tasks[0].Config["command"] != "/bin/sleep" {
		t.Fatalf("job after the revert: %+v, %v", j, err)
	}
	// The reverted version runs what the healthy allocations of version 0
	// run: its deployment succeeds on them.
	waitFor(t, f.Notifier(), "the reverted version's deployment successful", func() bool {
		list := jobDeployments(t, store)
		last := list[len(list)-1]
		return last.JobVersion == 2 && last.Status == events.DeploymentStatusSuccessful && last.TaskGroups["web"].HealthyAllocs == 2
	})
	// The metrics follow each recorded decision; no entry announces them.
	if !waittest.Poll(10*time.Second, func() bool {
		return gauge(t, reg, "ordo_deploywatch_active_deployments") == 0 && decisions(t, reg, deploywatch.OutcomeSuccessful) == 2
	}) {
		t.Fatalf("active deployments %v, successful decisions %v", gauge(t, reg, "ordo_deploywatch_active_deployments"),
			decisions(t, reg, deploywatch.OutcomeSuccessful))
	}
	for o, want := range map[string]float64{deploywatch.OutcomeFailed: 1, "reverted": 1, deploywatch.OutcomeCancelled: 0} {
		if got := decisions(t, reg, o); got != want {
			t.Fatalf("%s decisions %v, want %v", o, got, want)
		}
	}

	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Run = %v", err)
	}
	done <- nil // for the deferred wait
	goleak.VerifyNone(t, before)
}

// jobDeployments returns job web's deployments, oldest first.
func jobDeployments(t *testing.T, store *kv.Store) []*deployments.Deployment {
	t.Helper()
	snap := store.Snapshot()
	defer snap.Close()
	list, err := deployments.ByJob(projections.NewView(snap), "default", "web")
	if err != nil || len(list) == 0 {
		t.Fatalf("deployments %v, %v", list, err)
	}
	return list
}

// gauge returns the value of an unlabelled gauge.
func gauge(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.GetMetric()) == 1 {
			return mf.GetMetric()[0].GetGauge().GetValue()
		}
	}
	t.Fatalf("no gauge %s", name)
	return 0
}

// decisions returns ordo_deploywatch_decisions_total{outcome}.
func decisions(t *testing.T, reg *prometheus.Registry, outcome string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "ordo_deploywatch_decisions_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "outcome" && l.GetValue() == outcome {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}
