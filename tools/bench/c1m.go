package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/ordoplane/ordo/cmd/agent"
	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/job"
	"github.com/ordoplane/ordo/commands/job/jobspec"
	"github.com/ordoplane/ordo/commands/node"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/evals"
)

// c1m runs a C1M-style scheduling load on one server: simulated nodes
// (registered, never running anything) and jobs × allocations, and
// measures from the first job registration to the last allocation placed.
func c1m(nodeCount, jobCount, perJob, workers int) ([]row, error) {
	return c1mRun(nodeCount, jobCount, perJob, workers, plainC1MJob, nil)
}

// plainC1MJob is job i of the C1M run: perJob allocations asking for CPU
// and memory only.
func plainC1MJob(i, perJob int) string {
	return fmt.Sprintf(`job "c1m-%03d" {
  datacenters = ["dc1"]
  group "g" {
    count = %d
    task "t" {
      driver = "exec"
      config { command = "/bin/true" }
      resources {
        cpu    = 100
        memory = 64
      }
    }
  }
}`, i, perJob)
}

// c1mRun is the C1M run with the jobs src returns; after, when set, runs
// on the agent once every allocation is placed and adds its rows.
func c1mRun(nodeCount, jobCount, perJob, workers int, src func(i, perJob int) string,
	after func(a *agent.Agent) ([]row, error)) ([]row, error) {
	dir, err := os.MkdirTemp("", "ordo-bench-c1m-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	cfg := agent.DevConfig()
	cfg.DataDir = dir
	cfg.HTTPAddr, cfg.RaftAddr = "127.0.0.1:0", "127.0.0.1:0"
	cfg.HTTP.MaxConnsPerClient = -1 // load generators and simulated fleets all connect from 127.0.0.1
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg.RaftLogOutput = io.Discard
	if workers > 0 {
		cfg.Scheduler.Workers = workers
	}
	a, err := agent.Start(cfg)
	if err != nil {
		return nil, err
	}
	defer a.Shutdown()
	if _, err := waitLeader([]*agent.Agent{a}); err != nil {
		return nil, err
	}
	ctx := context.Background()
	req := commands.Request{Actor: "bench"}

	// Simulated fleet: register and mark ready, 64 at a time.
	err = parallel(64, nodeCount, func(i int) error {
		id := fmt.Sprintf("sim-%05d", i)
		n := events.Node{ID: id, Name: id, Datacenter: "dc1", NodePool: "default",
			Attributes: map[string]string{"kernel.name": "linux"},
			Resources:  events.NodeResources{CPU: 4000, MemoryMB: 16384, DiskMB: 100000},
			Drivers:    map[string]events.DriverInfo{"exec": {Detected: true, Healthy: true}},
			Networks:   []events.NodeNetwork{{Name: events.DefaultHostNetwork, Address: fmt.Sprintf("10.%d.%d.%d", i>>16, (i>>8)&255, i&255)}}}
		if _, err := a.Pipeline().Run(ctx, "node.register", req, node.Register{Node: n}); err != nil {
			return err
		}
		_, err := a.Pipeline().Run(ctx, "node.status", req, node.UpdateStatus{ID: id, Status: events.NodeStatusReady})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("register nodes: %w", err)
	}

	placed := counter(a.Registry(), "ordo_allocs_placed_total")
	busy0 := counter(a.Registry(), "ordo_worker_busy_seconds_total")
	plans0 := counter(a.Registry(), "ordo_plans_committed_total") + counter(a.Registry(), "ordo_plans_partial_total")
	partial0 := counter(a.Registry(), "ordo_plans_partial_total")
	applier0, applied0 := histogram(a.Registry(), "ordo_plan_apply_seconds")
	fsm0, _ := histogram(a.Registry(), "ordo_fsm_batch_apply_seconds")
	start, cpu0 := time.Now(), cpuTime() // rebuild.go
	err = parallel(8, jobCount, func(i int) error {
		j, err := jobspec.ParseHCL("c1m.hcl", []byte(src(i, perJob)))
		if err != nil {
			return err
		}
		_, err = a.Pipeline().Run(ctx, "job.register", req, &job.Register{Job: *j})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("register jobs: %w", err)
	}
	want := float64(jobCount * perJob)
	deadline := time.Now().Add(10 * time.Minute)
	for counter(a.Registry(), "ordo_allocs_placed_total")-placed < want {
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("only %.0f of %.0f allocations placed in 10 minutes",
				counter(a.Registry(), "ordo_allocs_placed_total")-placed, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
	el, cpu := time.Since(start), cpuTime()-cpu0
	plans := counter(a.Registry(), "ordo_plans_committed_total") + counter(a.Registry(), "ordo_plans_partial_total") - plans0
	busy := counter(a.Registry(), "ordo_worker_busy_seconds_total") - busy0
	nworkers := float64(a.Config().Scheduler.Workers)
	applier, applied := histogram(a.Registry(), "ordo_plan_apply_seconds")
	applier, applied = applier-applier0, applied-applied0
	fsm, _ := histogram(a.Registry(), "ordo_fsm_batch_apply_seconds")
	fsm -= fsm0
	lat, err := evalLatencies(a)
	if err != nil {
		return nil, err
	}
	label := fmt.Sprintf("%d nodes, %d jobs × %d", nodeCount, jobCount, perJob)
	rows := []row{
		{"allocations placed, " + label, want / el.Seconds(), "allocs/s"},
		{"time to place all, " + label, el.Seconds(), "s"},
		{"plans committed", plans / el.Seconds(), "plans/s"},
		{"plans committed in part (re-planned)", counter(a.Registry(), "ordo_plans_partial_total") - partial0, "plans"},
		{"eval latency p50 (create → complete)", percentileMS(lat, 0.50), "ms"},
		{"eval latency p99 (create → complete)", percentileMS(lat, 0.99), "ms"},
		{"scheduler worker utilisation", 100 * busy / (nworkers * el.Seconds()), "%"},
		{"plan apply latency mean (verify → committed)", 1000 * applier / max(applied, 1), "ms"},
		{"FSM busy (apply + Pebble commit)", 100 * fsm / el.Seconds(), "%"},
		// The server's CPU, all of it in this process: a figure that other
		// load on the machine disturbs less than the rate.
		{"server CPU per 1,000 allocations placed", 1000 * cpu.Seconds() * 1000 / want, "ms"},
	}
	if after != nil {
		more, err := after(a)
		if err != nil {
			return nil, err
		}
		rows = append(rows, more...)
	}
	return rows, nil
}

// evalLatencies returns, sorted, each completed eval's leader-time latency.
func evalLatencies(a *agent.Agent) ([]time.Duration, error) {
	snap := a.Store().Snapshot()
	defer snap.Close()
	var out []time.Duration
	err := evals.Scan(projections.NewView(snap), evals.Query{}, func(e *evals.Eval) error {
		if e.Status == events.EvalStatusComplete && e.TriggeredBy == events.EvalTriggerJobRegister {
			out = append(out, time.Duration(e.ModifyTime-e.CreateTime))
		}
		return nil
	})
	slices.Sort(out)
	return out, err
}

func percentileMS(sorted []time.Duration, p float64) float64 {
	return float64(percentile(sorted, p).Microseconds()) / 1000
}

// parallel runs f(0..n-1) on workers goroutines and returns the first error.
func parallel(workers, n int, f func(i int) error) error {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
		next  = make(chan int)
	)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := f(i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
				}
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	return first
}

// counter reads a counter's (or a gauge's) value from the registry, summed
// over its series; 0 when absent.
func counter(g prometheus.Gatherer, name string) float64 {
	mfs, err := g.Gather()
	if err != nil {
		return 0
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		var sum float64
		for _, m := range mf.GetMetric() {
			sum += metricValue(m)
		}
		return sum
	}
	return 0
}

// histogram reads the sum and count of a histogram's observations; zeros
// when absent.
func histogram(g prometheus.Gatherer, name string) (sum, count float64) {
	mfs, err := g.Gather()
	if err != nil {
		return 0, 0
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			for _, m := range mf.GetMetric() {
				sum += m.GetHistogram().GetSampleSum()
				count += float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return sum, count
}

func metricValue(m *dto.Metric) float64 {
	if c := m.GetCounter(); c != nil {
		return c.GetValue()
	}
	return m.GetGauge().GetValue()
}
