package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"runtime/pprof"
	"runtime/trace"
	"sort"
	"sync"
	"time"

	"github.com/ordoplane/ordo/api"
	"github.com/ordoplane/ordo/cmd/agent"
	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
)

// seedEvals is the bench's command that appends a batch of evals as given.
type seedEvals struct{ evals []events.Evaluation }

func (seedEvals) Validate() error { return nil }

func (c seedEvals) Decide(projections.View, time.Time, commands.IDs) (commands.Decision, error) {
	return commands.Decision{Events: []events.Payload{&events.EvalsUpserted{Evals: c.evals}}}, nil
}

// evalDeleteRows: a 3-server loopback cluster (scheduler off, so the
// pending evals stay pending) is seeded with n pending evals of jobs that
// do not exist, through the leader's pipeline in entries of 5,000 (the
// same path as any write: raft, every server's FSM); then DELETE
// /v1/evaluations with a filter removes them, page by page, while
// `clients` writers keep writing namespaces. Figures: seed and delete
// time, the longest single FSM batch apply on the leader during the
// delete, and the writers' p50/p99 latency during the delete.
func evalDeleteRows(n, pageSize, seedBatch, clients int) ([]row, error) {
	inFlight := 0 // the server's default
	if v := os.Getenv("ORDO_BENCH_EVALDELETE_INFLIGHT"); v != "" {
		fmt.Sscan(v, &inFlight)
	}
	dir, err := os.MkdirTemp("", "ordo-bench-evaldelete-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	var agents []*agent.Agent
	for i := range 3 {
		cfg := agent.DefaultConfig()
		cfg.DataDir = fmt.Sprintf("%s/s%d", dir, i)
		cfg.HTTPAddr, cfg.RaftAddr = "127.0.0.1:0", "127.0.0.1:0"
		cfg.HTTP.MaxConnsPerClient = -1 // load generators and simulated fleets all connect from 127.0.0.1
		cfg.BootstrapExpect = 3
		cfg.JoinInterval = 100 * time.Millisecond
		cfg.ClusterSecret = "bench-cluster-secret-0123456789"
		// Warnings (a "slow fsm batch" with its commit time) go to stderr.
		cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})).With("server", i)
		cfg.RaftLogOutput = io.Discard
		cfg.NoSync = os.Getenv("ORDO_BENCH_NOSYNC") != ""
		cfg.Scheduler.Disabled = true
		cfg.GC.Disabled = true
		// $ORDO_BENCH_EVALDELETE_NOVERSIONS keeps no time-travel versions
		// store, to tell its share of the cost from the delete's.
		cfg.TimeTravel.DisableVersions = os.Getenv("ORDO_BENCH_EVALDELETE_NOVERSIONS") != ""
		if i > 0 {
			cfg.Join = []string{agents[0].HTTPAddr()}
		}
		a, err := agent.Start(cfg)
		if err != nil {
			for _, a := range agents {
				a.Shutdown()
			}
			return nil, err
		}
		agents = append(agents, a)
	}
	defer func() {
		for _, a := range agents {
			a.Shutdown()
		}
	}()
	leader, err := waitLeader(agents)
	if err != nil {
		return nil, err
	}
	// Seed: entries of seedBatch evals, 4 in flight. Entries of 5,000 once
	// lost the leader: with no block cache (see storage/kv) each applied
	// for seconds, and a follower whose FSM lags blocks its raft loop. They
	// no longer do, but raft batches the four into one apply of up to
	// 20,000 evals (5.4 s at 1M), so the default stays 1,000.
	start := time.Now()
	batch := seedBatch
	now := time.Now().UnixNano()
	next := make(chan int)
	errs := make(chan error, 4)
	var seedWG sync.WaitGroup
	for range 4 {
		seedWG.Add(1)
		go func() {
			defer seedWG.Done()
			for i := range next {
				evs := make([]events.Evaluation, 0, batch)
				for j := i; j < i+batch && j < n; j++ {
					evs = append(evs, events.Evaluation{ID: fmt.Sprintf("bench-eval-%08d", j), Namespace: "default", Priority: 50,
						Type: events.JobTypeService, TriggeredBy: events.EvalTriggerNodeUpdate, JobID: fmt.Sprintf("gone-%d", j%1000),
						Status: events.EvalStatusPending, CreateTime: now, ModifyTime: now})
				}
				var err error
				for try, l := 0, leader; try < 10; try++ {
					if _, err = l.Pipeline().Run(context.Background(), "bench.seed", commands.Request{}, seedEvals{evs}); err == nil {
						break
					}
					if nl, werr := waitLeader(agents); werr == nil {
						l = nl
					}
				}
				if err != nil {
					errs <- fmt.Errorf("seed at %d: %w", i, err)
					return
				}
			}
		}()
	}
	func() {
		defer close(next)
		for i := 0; i < n; i += batch {
			select {
			case next <- i:
			case err := <-errs:
				errs <- err
				return
			}
		}
	}()
	seedWG.Wait()
	select {
	case err := <-errs:
		return nil, err
	default:
	}
	seeded := time.Since(start)
	var seedMax time.Duration
	for _, a := range agents {
		seedMax = max(seedMax, a.FSM().MaxApply())
	}
	fmt.Fprintf(os.Stderr, "bench: seeded %d evals in %s, longest apply %s\n", n, seeded, seedMax)
	if leader, err = waitLeader(agents); err != nil {
		return nil, err
	}
	waitApplied(agents, leader.FSM().Applied())
	settled := waitSettled(agents, 5*time.Minute)
	fmt.Fprintf(os.Stderr, "bench: the seed's flushes, compactions and versions settled %s after it\n", settled.Round(time.Second))

	// Delete under load.
	for _, a := range agents {
		a.FSM().MaxApply()
	}
	// $ORDO_BENCH_EVALDELETE_PROFILE: a CPU profile of the delete alone
	// (not the seed); every server, the handler and the load share the
	// process.
	var profile *os.File
	if path := os.Getenv("ORDO_BENCH_EVALDELETE_PROFILE"); path != "" {
		if profile, err = os.Create(path); err != nil {
			return nil, err
		}
		if err := pprof.StartCPUProfile(profile); err != nil {
			return nil, err
		}
	}
	// $ORDO_BENCH_EVALDELETE_TRACE: an execution trace of the delete's
	// first 4 s (`go tool trace -pprof=sched` tells where goroutines
	// waited for a core).
	if path := os.Getenv("ORDO_BENCH_EVALDELETE_TRACE"); path != "" {
		tf, err := os.Create(path)
		if err != nil {
			return nil, err
		}
		if err := trace.Start(tf); err != nil {
			return nil, err
		}
		time.AfterFunc(4*time.Second, func() { trace.Stop(); tf.Close() })
	}
	ctx, stop := context.WithCancel(context.Background())
	var mu sync.Mutex
	var lat []time.Duration
	failed := 0
	var wg sync.WaitGroup
	client := benchClient(leader.HTTPAddr(), api.WithRequestTimeout(30*time.Second))
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; ctx.Err() == nil; k++ {
				body := json.RawMessage(fmt.Sprintf(`{"Name":"w%d-%d","Description":"bench"}`, c, k%50))
				t0 := time.Now()
				err := client.Call(context.Background(), http.MethodPost, "/v1/namespace", nil, body, nil)
				d := time.Since(t0)
				ok := err == nil
				mu.Lock()
				if ok {
					lat = append(lat, d)
				} else {
					failed++
				}
				mu.Unlock()
			}
		}()
	}
	sampler := startApplySampler(agents)
	entries0, within0 := entriesWithin(agents, 0.01)
	cpu0 := cpuTime()
	sched0, pause0, gc0 := readRuntimeHist(schedLatencies), readRuntimeHist(gcPauses), gcCount()
	start = time.Now()
	deleted, pages, retries, err := deleteByFilter(agents, `Status == "pending"`, pageSize, inFlight)
	took := time.Since(start)
	cpu := cpuTime() - cpu0
	sched, pause, gcs := readRuntimeHist(schedLatencies).since(sched0), readRuntimeHist(gcPauses).since(pause0), gcCount()-gc0
	stop()
	wg.Wait()
	windows := sampler.stop()
	entries1, within1 := entriesWithin(agents, 0.01)
	if profile != nil {
		pprof.StopCPUProfile()
		profile.Close()
	}
	if err != nil {
		return nil, err
	}
	// The answers count what their pages deleted; a request cut short by
	// a leadership change deleted pages it could not report (the retry
	// resumes behind them and finds them gone). What must hold is that
	// none is left.
	left, err := countPending(agents)
	if err != nil {
		return nil, err
	}
	if left != 0 {
		return nil, fmt.Errorf("%d evals left after the delete (answers counted %d deleted of %d)", left, deleted, n)
	}
	if deleted != n {
		fmt.Fprintf(os.Stderr, "bench: none left; %d deleted by pages of requests cut short by a leadership change\n", n-deleted)
	}
	maxApply := windows.longest(batchApply)
	windows.report(os.Stderr, start)
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	label := fmt.Sprintf("%d pending evals, 3 servers", n)
	return []row{
		{fmt.Sprintf("eval delete: seed %s (entries of %d)", label, seedBatch), seeded.Seconds(), "s"},
		{"eval delete: longest FSM batch apply during the seed", ms(seedMax), "ms"},
		{"eval delete: wait for the seed's flushes, compactions and versions to settle", settled.Seconds(), "s"},
		{"eval delete: delete by filter, " + label, took.Seconds(), "s"},
		{"eval delete: evals deleted per second", float64(n) / took.Seconds(), "evals/s"},
		{"eval delete: CPU (whole process: 3 servers, load, handler) per eval deleted", float64(cpu.Microseconds()) / float64(n), "µs"},
		{"eval delete: longest FSM batch apply during the delete (any server)", ms(maxApply), "ms"},
		{"eval delete: 100 ms windows whose longest batch apply passed 10 ms (any server)", float64(windows.over(batchApply, 10*time.Millisecond)), "count"},
		{"eval delete: longest single entry apply during the delete, its batch's commit not included (any server)", ms(windows.longest(entryApply)), "ms"},
		{"eval delete: 100 ms windows whose longest entry apply passed 10 ms (any server)", float64(windows.over(entryApply, 10*time.Millisecond)), "count"},
		{"eval delete: entries applied during the delete (3 servers: pages, writes, the rest)", float64(entries1 - entries0), "count"},
		{"eval delete: of them, applied in over 10 ms (batch commit not included)", float64((entries1 - entries0) - (within1 - within0)), "count"},
		{"eval delete: 100 ms windows in all (3 servers)", float64(len(windows.w)), "count"},
		{"eval delete: goroutines' wait for a core (runnable to running), p99", ms(sched.quantile(0.99)), "ms"},
		{"eval delete: goroutines' wait for a core, p99.99", ms(sched.quantile(0.9999)), "ms"},
		{"eval delete: goroutines' waits for a core over 10 ms", float64(sched.over(10 * time.Millisecond)), "count"},
		{"eval delete: Go GC cycles during the delete", float64(gcs), "count"},
		{"eval delete: Go GC stop-the-world pauses, longest", ms(pause.quantile(1)), "ms"},
		{fmt.Sprintf("eval delete: concurrent writes during the delete, %d clients", clients), float64(len(lat)) / took.Seconds(), "writes/s"},
		{"eval delete: concurrent write p50", ms(percentile(lat, 0.50)), "ms"},
		{"eval delete: concurrent write p99", ms(percentile(lat, 0.99)), "ms"},
		{"eval delete: concurrent writes failed", float64(failed), "count"},
		{fmt.Sprintf("eval delete: requests (%d pages each)", pagesPerRequest), float64(pages), "count"},
		{"eval delete: requests retried (no leader)", float64(retries), "count"},
	}, nil
}

// waitSettled waits, up to limit, until every server's versions store
// holds what its FSM applied and its state store has run no flush or
// compaction for a few samples in a row, and returns how long it waited.
// A million evals do not arrive at once in a real cluster: their
// compactions are long done when someone deletes them, so the delete is
// measured without the seed's.
func waitSettled(agents []*agent.Agent, limit time.Duration) time.Duration {
	return waitQuiet(limit, func() bool {
		for _, a := range agents {
			if storeBusy(a.Store()) || counter(a.Registry(), "ordo_timetravel_versions_lag_entries") > 0 {
				return true
			}
		}
		return false
	})
}

// waitApplied waits until every agent applied index (or 2 minutes).
func waitApplied(agents []*agent.Agent, index uint64) {
	deadline := time.Now().Add(2 * time.Minute)
	for _, a := range agents {
		for a.FSM().Applied() < index && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// countPending returns how many pending evals the leader holds once every
// server applied what it has.
func countPending(agents []*agent.Agent) (int, error) {
	leader, err := waitLeader(agents)
	if err != nil {
		return 0, err
	}
	waitApplied(agents, leader.FSM().Applied())
	var out struct{ Count int }
	q := url.Values{"namespace": {"*"}, "filter": {`Status == "pending"`}}
	if err := benchClient(leader.HTTPAddr()).Get(context.Background(), "/v1/evaluations/count", q, &out); err != nil {
		return 0, fmt.Errorf("count: %w", err)
	}
	return out.Count, nil
}

// pagesPerRequest is the MaxPages of each delete request of the bench, as
// ordo eval delete's default -pages-per-request.
const pagesPerRequest = 100

// deleteByFilter deletes what filter selects through DELETE
// /v1/evaluations, pagesPerRequest pages a request as ordo eval delete does, resuming
// at NextToken; a request that meets no leader is retried on the new one.
func deleteByFilter(agents []*agent.Agent, filter string, pageSize, inFlight int) (deleted, requests, retries int, err error) {
	token := ""
	for {
		leader, err := waitLeader(agents)
		if err != nil {
			return deleted, requests, retries, err
		}
		fields := map[string]any{"Filter": filter, "MaxPages": pagesPerRequest, "PerPage": pageSize, "NextToken": token}
		if inFlight > 0 {
			fields["InFlight"] = inFlight
		}
		var out api.EvalDeleteResponse
		err = benchClient(leader.HTTPAddr()).Call(context.Background(), http.MethodDelete, "/v1/evaluations", nil, fields, &out)
		requests++
		if ae, ok := errors.AsType[*api.Error](err); ok && ae.Status == http.StatusServiceUnavailable && retries < 20 {
			retries++
			continue
		}
		if err != nil {
			return deleted, requests, retries, fmt.Errorf("delete: %w", err)
		}
		deleted += out.Count
		if token = out.NextToken; token == "" {
			return deleted, requests, retries, nil
		}
	}
}
