package gc_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/ordoplane/ordo/clock/clocktest"
	"github.com/ordoplane/ordo/commands"
	cgc "github.com/ordoplane/ordo/commands/gc"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/processors/gc"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/all"
	"github.com/ordoplane/ordo/projections/evals"
	pt "github.com/ordoplane/ordo/projections/projectionstest"
	"github.com/ordoplane/ordo/storage/waittest"
)

func eval(id, status string, at time.Time) events.Evaluation {
	return events.Evaluation{ID: id, Namespace: "default", Type: events.JobTypeService, JobID: "gone-" + id, Status: status,
		Priority: 50, TriggeredBy: events.EvalTriggerJobRegister, CreateTime: at.UnixNano(), ModifyTime: at.UnixNano()}
}

// The periodic run, paced by an injected clock, collects what is older
// than the thresholds and nothing else (a recent terminal eval and an old
// pending one stay); a forced, on-demand run (PUT /v1/system/gc) ignores
// the thresholds but still keeps what is not terminal.
func TestPeriodicAndOnDemand(t *testing.T) {
	store := pt.OpenStore(t)
	f := pt.NewFSM(t, store, all.Projections()...)
	clock := clocktest.NewClock(time.Unix(1_700_000_000, 0))
	n := 0
	p, err := commands.NewPipeline(commands.PipelineConfig{Log: &pt.FSMLog{FSM: f}, Store: store, Applied: f.Applied,
		Clock: clock, IDs: func() string { n++; return fmt.Sprint("id-", n) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	t0 := clock.Now()
	ent := pt.Entry(t, "seed", &events.EvalsUpserted{Evals: []events.Evaluation{
		eval("old-done", events.EvalStatusComplete, t0),
		eval("old-failed", events.EvalStatusFailed, t0),
		eval("old-pending", events.EvalStatusPending, t0),
		eval("new-done", events.EvalStatusComplete, t0.Add(50*time.Minute)),
	}})
	ent.Time = t0.UnixNano()
	if res := pt.ApplyOne(t, f, 1, ent); res.Err != nil {
		t.Fatal(res.Err)
	}
	proc, err := gc.New(gc.Config{Pipeline: p, Thresholds: cgc.DefaultThresholds(), Interval: 5 * time.Minute,
		Clock: clock, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- proc.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run = %v", err)
		}
	}()
	left := func() map[string]bool {
		out := map[string]bool{}
		_ = evals.Scan(projections.NewView(store), evals.Query{Namespace: "*"}, func(e *evals.Eval) error {
			out[e.ID] = true
			return nil
		})
		return out
	}
	waitArmed := func() {
		t.Helper()
		waittest.For(t, 10*time.Second, "the processor to wait for its next run", func() bool { return clock.Waiters() > 0 })
	}
	// A tick at t0+55m: the old terminal evals are 55m old, under the 1h
	// threshold; the run collects nothing and appends nothing (N15). Each
	// advance fires the one pending wait; the processor waits again once
	// its run is done.
	waitArmed()
	before := f.Applied()
	clock.Advance(55 * time.Minute)
	waitArmed()
	got := left()
	if !got["old-done"] || !got["old-failed"] || f.Applied() != before {
		t.Fatalf("after the run at t0+55m: evals %v, applied %d → %d; want nothing collected or appended", got, before, f.Applied())
	}
	// A tick at t0+61m: the old terminal evals are past 1h and go; the
	// pending one and the recent terminal one stay.
	clock.Advance(6 * time.Minute)
	waitArmed()
	got = left()
	if got["old-done"] || got["old-failed"] {
		t.Fatalf("after the run at t0+61m: evals %v, want old-done and old-failed collected", got)
	}
	if !got["old-pending"] || !got["new-done"] {
		t.Fatalf("periodic run removed more than what is old and terminal: left %v", got)
	}
	// On demand: forced, thresholds ignored; a pending eval still stays.
	counts, _, err := cgc.Run(context.Background(), p, "operator", cgc.Collect{Force: true})
	if err != nil && !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
	if got = left(); got["new-done"] || !got["old-pending"] || counts.Evals != 1 {
		t.Fatalf("after a forced run: left %v, collected %+v; want new-done gone, old-pending kept", got, counts)
	}
}
