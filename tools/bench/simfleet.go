package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/hashicorp/nomad/api"

	"github.com/ordoplane/ordo/tools/simfleet/fleet"
)

// The simfleet figures: a fleet of simulated nodes (tools/simfleet/fleet,
// in this process) against one server in a child process, over loopback
// HTTP and the client API only. CPU figures are per process, in percent
// of one core (the machine's cores are shared by both).

// sample is what one measurement point reads.
type sample struct {
	at                 time.Time
	stats              fleet.Stats
	serverCPU, selfCPU float64
}

func takeSample(c *childServer, f *fleet.Fleet) sample {
	s := sample{at: time.Now(), stats: f.Stats()}
	s.serverCPU, _ = cpuSeconds(c.pid())
	s.selfCPU, _ = cpuSeconds(0)
	return s
}

// fleetRun is a fleet running against a child server.
type fleetRun struct {
	child  *childServer
	f      *fleet.Fleet
	cancel context.CancelFunc
	wg     sync.WaitGroup
	runErr error
	// ready is how long the fleet took to register and be ready;
	// readyNodes how many were when startFleet returned.
	ready      time.Duration
	readyNodes int
}

// startFleet starts a child server with spec and a fleet of nodes against
// it, and waits until every node has started its session. With partial,
// it also returns once no node has become ready for 30 s (a server that
// cannot take the whole fleet), and r.readyNodes says how many are.
func startFleet(spec childSpec, nodes int, partial bool) (*fleetRun, error) {
	child, err := startChild(spec)
	if err != nil {
		return nil, err
	}
	f, err := fleet.New(fleet.Config{Servers: []string{child.addr}, Nodes: nodes,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		child.stop()
		return nil, err
	}
	r := &fleetRun{child: child, f: f}
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	start := time.Now()
	r.wg.Go(func() { r.runErr = f.Run(ctx) })
	deadline := start.Add(10 * time.Minute)
	best, progress := 0, start
	for {
		ready := f.Stats().Ready
		if ready > best {
			best, progress = ready, time.Now()
		}
		stalled := partial && time.Since(progress) > 30*time.Second
		if ready >= nodes || (partial && (stalled || time.Now().After(deadline))) {
			r.ready, r.readyNodes = time.Since(start), ready
			return r, nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			r.stop()
			return nil, fmt.Errorf("only %d of %d nodes ready after 10 minutes (%v)", ready, nodes, r.runErr)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (r *fleetRun) stop() {
	r.cancel()
	r.wg.Wait()
	r.child.stop()
}

func pct(cpu float64, d time.Duration) float64 { return 100 * cpu / d.Seconds() }

// fleetHeartbeats measures nodes heartbeating for window: at the default
// TTL when ttl is 0 (max(10 s, nodes / 50 per second) plus up to as much
// jitter), or at a TTL of ttl (plus jitter) with the rate limit lifted,
// which shows how many heartbeats the server absorbs at most.
func fleetHeartbeats(nodes int, window, ttl time.Duration) ([]row, error) {
	spec := childSpec{}
	label := fmt.Sprintf("%d nodes, default TTL", nodes)
	if ttl > 0 {
		spec = childSpec{HeartbeatMinTTL: ttl, MaxHeartbeatsPerSecond: 1e9}
		label = fmt.Sprintf("%d nodes, TTL %v", nodes, ttl)
	}
	r, err := startFleet(spec, nodes, ttl > 0)
	if err != nil {
		return nil, err
	}
	defer r.stop()
	r.f.TakeHeartbeatLatencies() // registration's ready heartbeats are not in the window
	okRoute := []string{`route="PUT /v1/client/{id}/heartbeat"`, `code="OK"`}
	hb0, err := scrape(r.child.addr, "ordo_http_request_seconds_count", okRoute...)
	if err != nil {
		return nil, err
	}
	missed0, _ := scrape(r.child.addr, "ordo_heartbeat_missed_total")
	s0 := takeSample(r.child, r.f)
	time.Sleep(window)
	s1 := takeSample(r.child, r.f)
	missed1, _ := scrape(r.child.addr, "ordo_heartbeat_missed_total")
	hb1, err := scrape(r.child.addr, "ordo_http_request_seconds_count", okRoute...)
	if err != nil {
		return nil, err
	}
	lat := r.f.TakeHeartbeatLatencies()
	polls, _ := scrape(r.child.addr, "ordo_blocking_queries_open")
	down, err := nodesNotReady(r.child.addr)
	if err != nil {
		return nil, err
	}
	el := s1.at.Sub(s0.at)
	var meanTTL time.Duration
	if n := s1.stats.TTLs - s0.stats.TTLs; n > 0 {
		meanTTL = (s1.stats.TTLSum - s0.stats.TTLSum) / time.Duration(n)
	}
	rows := []row{
		{"nodes registered and ready, " + label, float64(r.readyNodes) / r.ready.Seconds(), "nodes/s"},
		{"heartbeats absorbed (server, answered 200), " + label, (hb1 - hb0) / el.Seconds(), "heartbeats/s"},
		{"  window (starts once the fleet is in; TTLs first answered were for a smaller fleet)", el.Seconds(), "s"},
		{"  mean TTL answered in the window", meanTTL.Seconds(), "s"},
	}
	if r.readyNodes < nodes {
		rows = append(rows, row{"  nodes ready when the window started (the rest never got in)", float64(r.readyNodes), "nodes"})
	}
	if meanTTL > 0 {
		rows = append(rows, row{"  steady-state rate the TTLs imply (nodes / mean TTL)", float64(nodes) / meanTTL.Seconds(), "heartbeats/s"})
	}
	return append(rows,
		row{"  heartbeat latency p50 (fleet side)", percentileMS(lat, 0.50), "ms"},
		row{"  heartbeat latency p99 (fleet side)", percentileMS(lat, 0.99), "ms"},
		row{"  server CPU (child process)", pct(s1.serverCPU-s0.serverCPU, el), "% of a core"},
		row{"  server CPU per heartbeat absorbed (idle costs included)", 1e6 * (s1.serverCPU - s0.serverCPU) / max(hb1-hb0, 1), "µs"},
		row{"  fleet CPU (bench process)", pct(s1.selfCPU-s0.selfCPU, el), "% of a core"},
		row{"  server open files / long-polls open", float64(openFiles(r.child.pid())), fmt.Sprintf("fds (%.0f polls)", polls)},
		row{"  server RSS", rssMB(r.child.pid()), "MiB"},
		row{"  fleet open files", float64(openFiles(0)), "fds"},
		row{"  heartbeats missed (server) / nodes not ready at the end", missed1 - missed0, fmt.Sprintf("misses (%d nodes)", down)},
		row{"  fleet errors", float64(s1.stats.ErrorCount()), "calls"},
	), nil
}

// serverRunning sums the c1m jobs' running allocations as the servers'
// job summaries count them.
func serverRunning(c *api.Client, jobs int) int {
	n := 0
	for i := range jobs {
		sum, _, err := c.Jobs().Summary(fmt.Sprintf("c1m-%03d", i), nil)
		if err != nil {
			return -1
		}
		for _, tg := range sum.Summary {
			n += tg.Running
		}
	}
	return n
}

// nodesNotReady counts the server's nodes whose status is not ready.
func nodesNotReady(addr string) (int, error) {
	c, err := api.NewClient(&api.Config{Address: "http://" + addr})
	if err != nil {
		return 0, err
	}
	list, _, err := c.Nodes().List(nil)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, s := range list {
		if s.Status != "ready" {
			n++
		}
	}
	return n, nil
}

// c1mHTTP is the C1M-style run over HTTP: jobs × perJob allocations
// registered through the job API onto a simulated fleet that acks every
// allocation through the client API; it measures from the first job
// registration until the servers' job summaries count every allocation
// running, as the fleet reported them.
func c1mHTTP(nodes, jobs, perJob, workers int) ([]row, error) {
	r, err := startFleet(childSpec{Workers: workers}, nodes, false)
	if err != nil {
		return nil, err
	}
	defer r.stop()
	c, err := api.NewClient(&api.Config{Address: "http://" + r.child.addr,
		HttpClient: &http.Client{Timeout: time.Minute}})
	if err != nil {
		return nil, err
	}
	placed0, err := scrape(r.child.addr, "ordo_allocs_placed_total")
	if err != nil {
		return nil, err
	}
	r.f.TakeHeartbeatLatencies()
	want := jobs * perJob
	upd := []string{`command="alloc.client_update"`, `result="ok"`}
	updSum0, _ := scrape(r.child.addr, "ordo_command_seconds_sum", upd...)
	updN0, _ := scrape(r.child.addr, "ordo_command_seconds_count", upd...)
	commit0, _ := scrape(r.child.addr, "ordo_raft_commit_seconds_sum")
	commitN0, _ := scrape(r.child.addr, "ordo_raft_commit_seconds_count")
	missed0, _ := scrape(r.child.addr, "ordo_heartbeat_missed_total")
	s0 := takeSample(r.child, r.f)
	err = parallel(8, jobs, func(i int) error {
		job := api.NewServiceJob(fmt.Sprintf("c1m-%03d", i), fmt.Sprintf("c1m-%03d", i), "global", 50)
		job.Datacenters = []string{"dc1"}
		tg := api.NewTaskGroup("g", perJob)
		task := api.NewTask("t", "mock")
		cpu, mem := 100, 64
		task.Require(&api.Resources{CPU: &cpu, MemoryMB: &mem})
		tg.AddTask(task)
		job.AddTaskGroup(tg)
		_, _, err := c.Jobs().Register(job, nil)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("register jobs: %w", err)
	}
	// Done when the servers report every allocation running: checked
	// once the fleet has acked as many (the cheap test), then every 500ms.
	var placedAt time.Duration
	deadline := time.Now().Add(30 * time.Minute)
	var lastScrape, lastCheck time.Time
	for {
		if time.Now().After(deadline) {
			missed, _ := scrape(r.child.addr, "ordo_heartbeat_missed_total")
			return nil, fmt.Errorf("after 30 minutes the fleet has acked %d of %d allocations running, the servers report %d; %.0f heartbeats missed",
				r.f.Stats().AllocsRunning, want, serverRunning(c, jobs), missed-missed0)
		}
		if placedAt == 0 && time.Since(lastScrape) > 250*time.Millisecond {
			lastScrape = time.Now()
			if p, err := scrape(r.child.addr, "ordo_allocs_placed_total"); err == nil && p-placed0 >= float64(want) {
				placedAt = time.Since(s0.at)
			}
		}
		if r.f.Stats().AllocsRunning >= int64(want) && time.Since(lastCheck) > 500*time.Millisecond {
			lastCheck = time.Now()
			if serverRunning(c, jobs) >= want {
				break
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	s1 := takeSample(r.child, r.f)
	el := s1.at.Sub(s0.at)
	if placedAt == 0 {
		placedAt = el
	}
	lat := r.f.TakeHeartbeatLatencies()
	updSum, _ := scrape(r.child.addr, "ordo_command_seconds_sum", upd...)
	updN, _ := scrape(r.child.addr, "ordo_command_seconds_count", upd...)
	commit, _ := scrape(r.child.addr, "ordo_raft_commit_seconds_sum")
	commitN, _ := scrape(r.child.addr, "ordo_raft_commit_seconds_count")
	missed, _ := scrape(r.child.addr, "ordo_heartbeat_missed_total")
	placed, _ := scrape(r.child.addr, "ordo_allocs_placed_total")
	down, err := nodesNotReady(r.child.addr)
	if err != nil {
		return nil, err
	}
	label := fmt.Sprintf("%d nodes, %d jobs × %d, over HTTP", nodes, jobs, perJob)
	answers := float64(s1.stats.WatchAnswers - s0.stats.WatchAnswers)
	acted := float64(s1.stats.WatchChanged - s0.stats.WatchChanged)
	return []row{
		{"nodes registered and ready, " + fmt.Sprintf("%d nodes", nodes), float64(nodes) / r.ready.Seconds(), "nodes/s"},
		{"allocations running (acked by the fleet), " + label, float64(want) / el.Seconds(), "allocs/s"},
		{"  time to all running", el.Seconds(), "s"},
		{"  time to all placed", placedAt.Seconds(), "s"},
		{"  allocations placed in all (replacements of lost ones included)", placed - placed0, "allocs"},
		{"  alloc update calls", float64(s1.stats.AllocUpdateCalls-s0.stats.AllocUpdateCalls) / el.Seconds(), "calls/s"},
		{"  alloc update command latency mean (server side)", 1000 * (updSum - updSum0) / max(updN-updN0, 1), "ms"},
		{"  raft commit latency mean (append → applied)", 1000 * (commit - commit0) / max(commitN-commitN0, 1), "ms"},
		{"  allocation long-poll answers", answers / el.Seconds(), "answers/s"},
		{"  long-poll answers a node acted on", 100 * acted / max(answers, 1), "%"},
		{"  heartbeat latency p99 during the run (fleet side)", percentileMS(lat, 0.99), "ms"},
		{"  server CPU (child process)", pct(s1.serverCPU-s0.serverCPU, el), "% of a core"},
		{"  fleet CPU (bench process)", pct(s1.selfCPU-s0.selfCPU, el), "% of a core"},
		{"  server RSS", rssMB(r.child.pid()), "MiB"},
		{"  heartbeats missed (server) / nodes not ready at the end", missed - missed0, fmt.Sprintf("misses (%d nodes)", down)},
		{"  fleet errors", float64(s1.stats.ErrorCount()), "calls"},
	}, nil
}
