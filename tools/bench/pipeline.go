package main

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/ordoplane/ordo/cmd/agent"
	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/namespace"
)

// pipelineRows runs clients goroutines submitting namespace commands straight
// to the leader's command pipeline for d: the log's capacity without HTTP.
func pipelineRows(label string, leader *agent.Agent, clients int, d time.Duration) []row {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var (
		mu  sync.Mutex
		lat []time.Duration
		wg  sync.WaitGroup
	)
	start, cpu0 := time.Now(), cpuTime()
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mine := make([]time.Duration, 0, 4096)
			for n := 0; ctx.Err() == nil; n++ {
				t0 := time.Now()
				cmd := namespace.Apply{Name: fmt.Sprintf("pl-%d-%d-%d", start.UnixNano()%1e6, c, n)}
				if _, err := leader.Pipeline().Run(context.Background(), "namespace.apply", commands.Request{}, cmd); err == nil {
					mine = append(mine, time.Since(t0))
				}
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	el, cpu := time.Since(start), cpuTime()-cpu0
	slices.Sort(lat)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	return []row{
		{fmt.Sprintf("acked commands without HTTP, %s, %d clients", label, clients), float64(len(lat)) / el.Seconds(), "commands/s"},
		{fmt.Sprintf("command p99 without HTTP, %s", label), ms(percentile(lat, 0.99)), "ms"},
		{fmt.Sprintf("CPU per command without HTTP, %s (every server and the load in one process)", label), float64(cpu.Microseconds()) / float64(max(len(lat), 1)), "µs"},
	}
}
