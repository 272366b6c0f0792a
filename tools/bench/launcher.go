package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/ordoplane/ordo/commands"
	lcmd "github.com/ordoplane/ordo/commands/launcher"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/processors/launcher"
	"github.com/ordoplane/ordo/processors/launcher/driver"
	"github.com/ordoplane/ordo/processors/launcher/driver/sim"
	"github.com/ordoplane/ordo/projections/all"
	"github.com/ordoplane/ordo/projections/fsm"
	"github.com/ordoplane/ordo/storage/kv"
	"github.com/ordoplane/ordo/storage/raftlog"
)

// launcherLog applies entries straight to the FSM (a single server's
// log without raft: the figures are the launcher's, not consensus) and
// tells watch about each fulfilled request.
type launcherLog struct {
	mu    sync.Mutex
	fsm   *fsm.FSM
	watch func(ev *events.Event)
}

func (l *launcherLog) Append(_ context.Context, data []byte) (any, uint64, error) {
	l.mu.Lock()
	index := l.fsm.Applied() + 1
	res := l.fsm.Apply([]raftlog.Log{{Index: index, Term: 1, Data: data}})[0]
	l.mu.Unlock()
	if r, ok := res.(fsm.Result); ok {
		if e, err := events.DecodeEntry(data); err == nil {
			l.watchEntry(e, r)
		}
	}
	return res, index, nil
}

// watchEntry tells watch about the events of e's applied commands, a
// grouped entry's command by command.
func (l *launcherLog) watchEntry(e *events.Entry, r fsm.Result) {
	if e.Grouped() {
		for i := range e.Group {
			if i < len(r.Group) {
				l.watchEntry(&e.Group[i], r.Group[i])
			}
		}
		return
	}
	if r.Err != nil {
		return
	}
	for i := range e.Events {
		l.watch(&e.Events[i])
	}
}

// launcherRows: n node requests over 3 sim providers with quotas and a 5%
// transient create failure rate, zero-delay boot. Requestors delete a
// request once it is fulfilled (as CI does when a build ends), which
// frees quota. Figures: requests fulfilled per second, p99 time from
// create to fulfilled, and the goroutines the launcher added at peak.
func launcherRows(n int) ([]row, error) {
	dir, err := os.MkdirTemp("", "ordo-bench-launcher-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	store, err := kv.Open(dir, kv.Config{})
	if err != nil {
		return nil, err
	}
	defer store.Close()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	fsm, err := fsm.New(store, fsm.Config{Projections: all.Projections(), Logger: quiet})
	if err != nil {
		return nil, err
	}
	defer fsm.Close()
	var mu sync.Mutex
	created := map[string]time.Time{}
	var lat []time.Duration
	failed := 0
	fulfilled := make(chan string, n)
	lg := &launcherLog{fsm: fsm, watch: func(ev *events.Event) {
		if ev.Type != "NodeRequestFulfilled" && ev.Type != "NodeRequestFailed" {
			return
		}
		id := ev.Key(events.KindNodeRequest)
		mu.Lock()
		if t, ok := created[id]; ok {
			if ev.Type == "NodeRequestFailed" {
				failed++ // its launches failed LaunchRetries times
			} else {
				lat = append(lat, time.Since(t))
			}
			delete(created, id)
			fulfilled <- id
		}
		mu.Unlock()
	}}
	p, err := commands.NewPipeline(commands.PipelineConfig{Log: lg, Store: store, Applied: fsm.Applied, Logger: quiet})
	if err != nil {
		return nil, err
	}
	defer p.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req := commands.Request{Actor: "bench"}
	for i, q := range []events.SimQuota{{Instances: 200, Cores: 400}, {Instances: 300}, {Cores: 800}} {
		cfg := events.ProviderConfig{Name: fmt.Sprintf("cloud-%d", i), Driver: "sim", Priority: 50 * (i + 1),
			Pools:  []events.ProviderPool{{Name: "main", Labels: []string{"small"}}},
			Labels: []events.LabelConfig{{Name: "small", InstanceType: "small"}},
			Sim:    &events.SimConfig{InstanceTypes: map[string]events.SimInstanceType{"small": {Cores: 2, RAMMB: 2048}}, Quota: q}}
		if _, err := p.Run(ctx, "provider.apply", req, lcmd.ApplyProvider{Config: cfg}); err != nil {
			return nil, err
		}
	}
	base := runtime.NumGoroutine()
	l, err := launcher.New(launcher.Config{Pipeline: p, State: fsm, Logger: quiet, PollInterval: 5 * time.Millisecond,
		Drivers: map[string]launcher.Factory{"sim": func(cfg events.ProviderConfig) (driver.Driver, error) {
			return sim.New(*cfg.Sim, sim.Faults{FailRate: 0.05, Seed: uint64(cfg.Priority)}), nil
		}}})
	if err != nil {
		return nil, err
	}
	defer l.Close()
	done := make(chan error, 1)
	go func() { done <- l.Run(ctx) }()
	defer func() {
		cancel()
		<-done // the launcher is done with the store before it closes
	}()
	// Requestors: delete each request once fulfilled.
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < n; i++ {
			select {
			case id := <-fulfilled:
				_, _ = p.Run(ctx, "node-request.delete", req, lcmd.DeleteRequest{ID: id})
			case <-ctx.Done():
				return
			}
		}
	}()
	peak := 0
	start, startCPU := time.Now(), cpuTime()
	for i := 0; i < n; i++ {
		c := &lcmd.CreateRequest{Labels: []string{"small"}, Requestor: "bench"}
		mu.Lock() // the id is known only after Run: hold the watcher until it is recorded
		t := time.Now()
		_, err := p.Run(ctx, "node-request.create", req, c)
		created[c.ID()] = t
		mu.Unlock()
		if err != nil {
			return nil, err
		}
		if i%100 == 0 {
			peak = max(peak, runtime.NumGoroutine()-base)
		}
	}
	deadline := time.After(10 * time.Minute)
	for {
		mu.Lock()
		left := len(created)
		mu.Unlock()
		peak = max(peak, runtime.NumGoroutine()-base)
		if left == 0 {
			break
		}
		select {
		case <-deadline:
			return nil, fmt.Errorf("launcher bench: %d of %d requests unfulfilled after 10m", left, n)
		case <-time.After(20 * time.Millisecond):
		}
	}
	elapsed, cpu := time.Since(start), cpuTime()-startCPU
	wg.Wait()
	slices.Sort(lat)
	p99 := lat[min(len(lat)-1, len(lat)*99/100)]
	p50 := lat[len(lat)/2]
	return []row{
		{"launcher: node requests fulfilled (3 sim providers, quotas, 5% create failures)", float64(len(lat)), "requests"},
		{"launcher: node requests failed (launch failed 3 times)", float64(failed), "requests"},
		{"launcher: requests fulfilled per second", float64(len(lat)) / elapsed.Seconds(), "requests/s"},
		{"launcher: time to fulfil p50 (zero-delay boot)", float64(p50.Microseconds()) / 1000, "ms"},
		{"launcher: time to fulfil p99 (zero-delay boot)", float64(p99.Microseconds()) / 1000, "ms"},
		{"launcher: goroutines added at peak (3 runners + the launcher)", float64(peak), "goroutines"},
		// CPU per request says what a request costs whatever else the
		// shared machine runs (the pipeline and FSM apply included).
		{"launcher: process CPU per fulfilled request", cpu.Seconds() * 1000 / float64(max(len(lat), 1)), "ms"},
	}, nil
}
