package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ordoplane/ordo/api"
)

// loadResult is what one load run measured.
type loadResult struct {
	acked     int
	failed    int
	elapsed   time.Duration
	latencies []time.Duration
	// cpu is this process's CPU time over the run.
	cpu time.Duration
}

// load runs clients goroutines writing unique namespaces to addrs (round
// robin per client) for d and returns what was acknowledged.
func load(addrs []string, clients int, d time.Duration) loadResult {
	start := time.Now()
	return loadWith(addrs, clients, d, func(c, n int) *api.Request {
		name := fmt.Sprintf("lg-%d-%d-%d", start.UnixNano()%1e6, c, n)
		body := json.RawMessage(fmt.Sprintf(`{"Name":%q,"Description":"load generator"}`, name))
		return &api.Request{Method: http.MethodPut, Path: "/v1/namespace/" + name, Body: body}
	})
}

// readLoad runs clients goroutines reading the default namespace from
// addrs (round robin per client: followers forward to the leader) for d.
func readLoad(addrs []string, clients int, d time.Duration) loadResult {
	return loadWith(addrs, clients, d, func(_, _ int) *api.Request {
		return &api.Request{Method: http.MethodGet, Path: "/v1/namespace/default"}
	})
}

// loadWith runs clients goroutines sending the n-th request of client c,
// next(c, n), to one of addrs for d and returns what was answered 200.
func loadWith(addrs []string, clients int, d time.Duration, next func(c, n int) *api.Request) loadResult {
	tr := &http.Transport{MaxIdleConns: clients * 2, MaxIdleConnsPerHost: clients * 2, IdleConnTimeout: time.Minute}
	hc := &http.Client{Transport: tr}
	defer tr.CloseIdleConnections()
	servers := make([]*api.Client, len(addrs))
	for i, addr := range addrs {
		servers[i] = benchClient(addr, api.WithHTTPClient(hc), api.WithRequestTimeout(30*time.Second))
	}
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var (
		mu     sync.Mutex
		res    loadResult
		failed atomic.Int64
		wg     sync.WaitGroup
	)
	start, cpu0 := time.Now(), cpuTime()
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			server := servers[c%len(servers)]
			lat := make([]time.Duration, 0, 4096)
			for n := 0; ctx.Err() == nil; n++ {
				req := next(c, n)
				t0 := time.Now()
				// Not ctx: a request in flight at the end still counts.
				if _, err := server.Do(context.Background(), req, nil); err != nil {
					failed.Add(1)
					continue
				}
				lat = append(lat, time.Since(t0))
			}
			mu.Lock()
			res.latencies = append(res.latencies, lat...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	res.elapsed, res.cpu = time.Since(start), cpuTime()-cpu0
	res.acked = len(res.latencies)
	res.failed = int(failed.Load())
	slices.Sort(res.latencies)
	return res
}

func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted)-1) * p)
	return sorted[i]
}

// loadRows runs load and returns its figures; inProcess adds the CPU per
// write when the servers run in this process.
func loadRows(label string, addrs []string, clients int, d time.Duration, inProcess bool) ([]row, error) {
	r := load(addrs, clients, d)
	if r.acked == 0 {
		return nil, fmt.Errorf("no write acknowledged (%d failed)", r.failed)
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	rows := []row{
		{fmt.Sprintf("acked writes, %s, %d clients", label, clients), float64(r.acked) / r.elapsed.Seconds(), "writes/s"},
		{fmt.Sprintf("write p50, %s", label), ms(percentile(r.latencies, 0.50)), "ms"},
		{fmt.Sprintf("write p99, %s", label), ms(percentile(r.latencies, 0.99)), "ms"},
		{fmt.Sprintf("failed writes, %s", label), float64(r.failed), "count"},
	}
	if inProcess {
		rows = append(rows, row{fmt.Sprintf("CPU per write, %s (every server and the load in one process)", label), float64(r.cpu.Microseconds()) / float64(r.acked), "µs"})
	}
	return rows, nil
}

// readRows are the figures of reads r from every server of a cluster
// (readLoad's, latencies sorted); how names the read path
// ("linearizable", or "unconfirmed": the leader answering without
// confirming it still leads, as before reads were linearizable).
func readRows(label, how string, clients int, r loadResult) ([]row, error) {
	if r.acked == 0 {
		return nil, fmt.Errorf("no read answered (%d failed)", r.failed)
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	return []row{
		{fmt.Sprintf("reads, %s, %s, %d clients", how, label, clients), float64(r.acked) / r.elapsed.Seconds(), "reads/s"},
		{fmt.Sprintf("read p99, %s, %s", how, label), ms(percentile(r.latencies, 0.99)), "ms"},
		{fmt.Sprintf("failed reads, %s, %s", how, label), float64(r.failed), "count"},
	}, nil
}
