package commands_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ordoplane/ordo/clock/clocktest"
	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/namespace"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/all"
	"github.com/ordoplane/ordo/projections/fsm"
	"github.com/ordoplane/ordo/projections/namespaces"
	"github.com/ordoplane/ordo/storage/archive"
	"github.com/ordoplane/ordo/storage/kv"
	"github.com/ordoplane/ordo/storage/raftlog"
)

// fsmLog is a Proposer that applies each entry straight to an FSM, as a
// single-server raft would, numbering entries itself.
type fsmLog struct {
	fsm *fsm.FSM
	mu  sync.Mutex
	// before, when set, runs before an entry is applied (under mu, with the
	// index the entry will get); a test uses it to slip in a competing entry.
	before func(index uint64) uint64
	// err, when set, is returned instead of appending.
	err     error
	appends int
}

func (l *fsmLog) Append(_ context.Context, data []byte) (any, uint64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		return nil, 0, l.err
	}
	l.appends++
	index := l.fsm.Applied() + 1
	if l.before != nil {
		index = l.before(index)
	}
	res := l.fsm.Apply([]raftlog.Log{{Index: index, Term: 1, Data: data}})
	return res[0], index, nil
}

// applyRaw applies an entry with payloads directly, bypassing the pipeline.
func (l *fsmLog) applyRaw(t *testing.T, index uint64, cmdID string, ps ...events.Payload) {
	t.Helper()
	entry := events.Entry{Time: 1, CommandID: cmdID}
	for i, p := range ps {
		ev, err := events.New(fmt.Sprintf("%s-%d", cmdID, i), p)
		if err != nil {
			t.Fatal(err)
		}
		entry.Events = append(entry.Events, ev)
	}
	data, err := events.EncodeEntry(&entry)
	if err != nil {
		t.Fatal(err)
	}
	if res := l.fsm.Apply([]raftlog.Log{{Index: index, Term: 1, Data: data}})[0].(fsm.Result); res.Err != nil {
		t.Fatal(res.Err)
	}
}

type fixture struct {
	store *kv.Store
	log   *fsmLog
	p     *commands.Pipeline
	reg   *prometheus.Registry
}

// newFixture builds a pipeline over a fresh store and FSM; opts adjust
// its configuration.
func newFixture(t *testing.T, opts ...func(*commands.PipelineConfig, *fsm.FSM)) *fixture {
	t.Helper()
	store, err := kv.Open(t.TempDir(), kv.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	fsm, err := fsm.New(store, fsm.Config{Projections: all.Projections(), Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fsm.Close)
	l := &fsmLog{fsm: fsm}
	var n int
	var idMu sync.Mutex
	reg := prometheus.NewRegistry()
	cfg := commands.PipelineConfig{
		Log: l, Store: store, Applied: fsm.Applied, Logger: logger, Registerer: reg,
		Clock: clocktest.NewClock(time.Date(2025, 1, 2, 3, 4, 5, 0, time.FixedZone("x", 3600))),
		IDs: func() string {
			idMu.Lock()
			defer idMu.Unlock()
			n++
			return fmt.Sprintf("id-%03d", n)
		},
	}
	for _, o := range opts {
		o(&cfg, fsm)
	}
	p, err := commands.NewPipeline(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return &fixture{store: store, log: l, p: p, reg: reg}
}

func (f *fixture) archiveLen(t *testing.T) uint64 {
	t.Helper()
	n, err := archive.Len(f.store)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func (f *fixture) events(t *testing.T) []*events.Event {
	t.Helper()
	var out []*events.Event
	err := archive.Scan(f.store, 0, 0, func(_ uint64, _ uint32, data []byte) error {
		ev, err := events.DecodeEvent(data)
		out = append(out, ev)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestNewPipelineRequires(t *testing.T) {
	if _, err := commands.NewPipeline(commands.PipelineConfig{}); err == nil {
		t.Fatal("NewPipeline with nothing configured succeeded")
	}
}

func TestPipelineRun(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	out, err := f.p.Run(ctx, "namespace.apply", commands.Request{Actor: "alice"},
		namespace.Apply{Name: "payments", Description: "pay"})
	if err != nil {
		t.Fatal(err)
	}
	if out.Index != 1 || out.Duplicate {
		t.Fatalf("outcome = %+v, want index 1, not duplicate", out)
	}
	evs := f.events(t)
	if len(evs) != 1 {
		t.Fatalf("archive holds %d events, want 1", len(evs))
	}
	ev := evs[0]
	wantTime := time.Date(2025, 1, 2, 2, 4, 5, 0, time.UTC).UnixNano()
	if ev.Type != "NamespaceUpserted" || ev.Index != 1 || ev.Actor != "alice" || ev.Time != wantTime {
		t.Fatalf("event = %+v", ev)
	}
	// One id for the command (its correlation id), one for the event.
	if ev.ID == "" || ev.CorrelationID == "" || ev.ID == ev.CorrelationID {
		t.Fatalf("ids: event %q, correlation %q", ev.ID, ev.CorrelationID)
	}
	snap := f.store.Snapshot()
	ns, err := namespaces.Get(projections.NewView(snap), "payments")
	snap.Close()
	if err != nil || ns.Description != "pay" || ns.CreateIndex != 1 {
		t.Fatalf("projected %+v, %v", ns, err)
	}
}

func TestPipelineRefusesBeforeProposing(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.log.applyRaw(t, 1, "seed", &events.NamespaceUpserted{Namespace: events.Namespace{Name: "default"}})
	before := f.archiveLen(t)
	for _, tc := range []struct {
		name   string
		cmd    commands.Command
		status int
	}{
		{"invalid name", namespace.Apply{Name: "bad_name!"}, 400},
		{"invalid description", namespace.Apply{Name: "a", Description: string(make([]byte, 300))}, 400},
		{"delete default", namespace.Delete{Name: "default"}, 400},
		{"delete missing", namespace.Delete{Name: "missing"}, 404},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := f.p.Run(ctx, "test", commands.Request{}, tc.cmd)
			if got := commands.Status(err); got != tc.status {
				t.Fatalf("Status(%v) = %d, want %d", err, got, tc.status)
			}
		})
	}
	if f.log.appends != 0 {
		t.Fatalf("%d entries proposed for refused commands", f.log.appends)
	}
	if got := f.archiveLen(t); got != before {
		t.Fatalf("archive length %d, want %d", got, before)
	}
}

func TestPipelineNothingToDo(t *testing.T) {
	f := newFixture(t)
	f.log.applyRaw(t, 1, "seed", &events.NamespaceUpserted{Namespace: events.Namespace{Name: "default"}})
	f.log.applyRaw(t, 2, "other", &events.ServerRegistered{ID: "s1", RaftAddr: "r", HTTPAddr: "h"})
	out, err := f.p.Run(context.Background(), "namespace.apply", commands.Request{},
		namespace.Apply{Name: "default", IfAbsent: true})
	if err != nil {
		t.Fatal(err)
	}
	if out.Index != 2 || out.Duplicate {
		t.Fatalf("outcome = %+v, want the applied index 2", out)
	}
	if f.log.appends != 0 {
		t.Fatalf("proposed %d entries for a no-op", f.log.appends)
	}
}

func TestPipelineIdempotent(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	req := commands.Request{CommandID: "key-1", Actor: "alice"}
	first, err := f.p.Run(ctx, "namespace.apply", req, namespace.Apply{Name: "payments"})
	if err != nil {
		t.Fatal(err)
	}
	// A retry of the same request is answered from the record.
	again, err := f.p.Run(ctx, "namespace.apply", req, namespace.Apply{Name: "payments"})
	if err != nil {
		t.Fatal(err)
	}
	// The same key with another request is refused, not silently dropped.
	_, err = f.p.Run(ctx, "namespace.apply", req, namespace.Apply{Name: "payments", Description: "changed"})
	if commands.Status(err) != 409 {
		t.Fatalf("reused key with another request: %v (status %d), want 409", err, commands.Status(err))
	}
	if first.Duplicate || !again.Duplicate || again.Index != first.Index {
		t.Fatalf("first %+v, again %+v", first, again)
	}
	if f.log.appends != 1 || f.archiveLen(t) != 1 {
		t.Fatalf("appends %d, archive %d; want 1 and 1", f.log.appends, f.archiveLen(t))
	}
	if evs := f.events(t); evs[0].CorrelationID != "key-1" {
		t.Fatalf("correlation id %q, want the command id", evs[0].CorrelationID)
	}
}

// TestPipelineDuplicateAtApply: two runs with one command id both decide
// before either applies; the FSM applies the second as a duplicate.
func TestPipelineDuplicateAtApply(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	req := commands.Request{CommandID: "key-2"}
	var inner commands.Outcome
	var innerErr error
	f.log.before = func(index uint64) uint64 {
		f.log.before = nil
		// The retry decided against the same snapshot arrives first.
		f.log.mu.Unlock()
		inner, innerErr = f.p.Run(ctx, "namespace.apply", req, namespace.Apply{Name: "payments"})
		f.log.mu.Lock()
		return f.log.fsm.Applied() + 1
	}
	outer, err := f.p.Run(ctx, "namespace.apply", req, namespace.Apply{Name: "payments"})
	if err != nil || innerErr != nil {
		t.Fatal(err, innerErr)
	}
	if inner.Duplicate || !outer.Duplicate || outer.Index != inner.Index {
		t.Fatalf("inner %+v, outer %+v", inner, outer)
	}
	if f.archiveLen(t) != 1 {
		t.Fatalf("archive holds %d events, want 1", f.archiveLen(t))
	}
}

// TestPipelineConflict: a delete decided while the namespace existed
// applies after a competing delete and is rejected with a *ConflictError.
func TestPipelineConflict(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.log.applyRaw(t, 1, "seed", &events.NamespaceUpserted{Namespace: events.Namespace{Name: "payments"}})
	f.log.before = func(index uint64) uint64 {
		f.log.before = nil
		f.log.applyRaw(t, index, "competitor", &events.NamespaceDeleted{Name: "payments"})
		return index + 1
	}
	before := f.archiveLen(t) + 1 // the competitor's event
	_, err := f.p.Run(ctx, "namespace.delete", commands.Request{CommandID: "mine"}, namespace.Delete{Name: "payments"})
	var ce *commands.ConflictError
	if !errors.As(err, &ce) {
		t.Fatalf("err = %v (%T), want *ConflictError", err, err)
	}
	if ce.Precondition.Op != events.Exists || ce.Precondition.Key != "payments" || commands.Status(err) != 409 {
		t.Fatalf("conflict %+v, status %d", ce, commands.Status(err))
	}
	if got := f.archiveLen(t); got != before {
		t.Fatalf("archive length %d, want %d: a rejection appends nothing", got, before)
	}
	// Retrying the same command id reports the same rejection, not a new attempt.
	_, err = f.p.Run(ctx, "namespace.delete", commands.Request{CommandID: "mine"}, namespace.Delete{Name: "payments"})
	if commands.Status(err) != 409 {
		t.Fatalf("retry of a rejected command: %v", err)
	}
}

func TestPipelineNotLeader(t *testing.T) {
	f := newFixture(t)
	f.log.err = fmt.Errorf("%w: lost it", raftlog.ErrNotLeader)
	_, err := f.p.Run(context.Background(), "namespace.apply", commands.Request{}, namespace.Apply{Name: "payments"})
	if !errors.Is(err, commands.ErrNoLeader) || commands.Status(err) != 503 {
		t.Fatalf("err = %v (status %d), want ErrNoLeader/503", err, commands.Status(err))
	}
}

func TestPipelineMetrics(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	if _, err := f.p.Run(ctx, "namespace.apply", commands.Request{}, namespace.Apply{Name: "a"}); err != nil {
		t.Fatal(err)
	}
	_, _ = f.p.Run(ctx, "namespace.apply", commands.Request{}, namespace.Apply{Name: "bad_name"})
	mfs, err := f.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	results := map[string]uint64{}
	for _, mf := range mfs {
		if mf.GetName() != "ordo_command_seconds" {
			continue
		}
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			results[labels["command"]+"/"+labels["result"]] += m.GetHistogram().GetSampleCount()
		}
	}
	if results["namespace.apply/ok"] != 1 || results["namespace.apply/400"] != 1 {
		t.Fatalf("ordo_command_seconds samples = %v", results)
	}
	// Close unregisters, so a new pipeline can register on the same registry.
	f.p.Close()
	if _, err := commands.NewPipeline(commands.PipelineConfig{Log: f.log, Store: f.store,
		Applied: f.log.fsm.Applied, Registerer: f.reg}); err != nil {
		t.Fatal(err)
	}
}

// Close waits for running commands and refuses new ones, so the store under
// them is never closed mid-command.
func TestPipelineCloseRefusesNewCommands(t *testing.T) {
	f := newFixture(t)
	f.p.Close()
	_, err := f.p.Run(context.Background(), "namespace.apply", commands.Request{}, namespace.Apply{Name: "late"})
	if commands.Status(err) != 503 {
		t.Fatalf("command after Close: %v (status %d), want 503", err, commands.Status(err))
	}
}
