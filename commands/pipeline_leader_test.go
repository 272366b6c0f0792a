package commands_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/namespace"
	"github.com/ordoplane/ordo/projections/fsm"
	"github.com/ordoplane/ordo/projections/namespaces"
	"github.com/ordoplane/ordo/storage/raftlog"
)

// leaderState answers the pipeline's leadership questions as a test sets
// them, counting the confirmations asked for.
type leaderState struct {
	ready, confirmed error
	confirms         atomic.Int32
}

func (l *leaderState) AwaitReady(context.Context) error { return l.ready }
func (l *leaderState) ConsistentRead(context.Context) error {
	l.confirms.Add(1)
	if l.ready != nil {
		return l.ready
	}
	return l.confirmed
}

func withLeader(l *leaderState) func(*commands.PipelineConfig, *fsm.FSM) {
	return func(c *commands.PipelineConfig, _ *fsm.FSM) { c.Leader = l }
}

// TestPipelineDecidesOnlyOnAReadyLeader: a server that has not applied
// every entry of earlier terms decides nothing: 503, nothing appended.
func TestPipelineDecidesOnlyOnAReadyLeader(t *testing.T) {
	l := &leaderState{ready: raftlog.ErrNotLeader}
	f := newFixture(t, withLeader(l))
	_, err := f.p.Run(context.Background(), "namespace.apply", commands.Request{}, namespace.Apply{Name: "web"})
	if !errors.Is(err, commands.ErrNoLeader) || commands.Status(err) != 503 {
		t.Fatalf("run on a leader not ready = %v, want ErrNoLeader (503)", err)
	}
	if f.log.appends != 0 || f.archiveLen(t) != 0 {
		t.Fatalf("appended %d entries", f.log.appends)
	}
}

// TestPipelineConfirmsAnswersFromState: a refusal decided from the state
// (here: no such namespace) is answered only once leadership is
// confirmed; a deposed leader answers 503 instead of what its old state
// says. A write that commits needs no confirmation: its commit is one.
func TestPipelineConfirmsAnswersFromState(t *testing.T) {
	l := &leaderState{confirmed: raftlog.ErrNotLeader}
	f := newFixture(t, withLeader(l))
	_, err := f.p.Run(context.Background(), "namespace.delete", commands.Request{}, namespace.Delete{Name: "gone"})
	if !errors.Is(err, commands.ErrNoLeader) {
		t.Fatalf("refusal on a deposed leader = %v, want ErrNoLeader", err)
	}
	l.confirmed = nil
	_, err = f.p.Run(context.Background(), "namespace.delete", commands.Request{}, namespace.Delete{Name: "gone"})
	if commands.Status(err) != 404 {
		t.Fatalf("refusal on a confirmed leader = %v, want 404", err)
	}
	before := l.confirms.Load()
	if _, err := f.p.Run(context.Background(), "namespace.apply", commands.Request{}, namespace.Apply{Name: "web"}); err != nil {
		t.Fatal(err)
	}
	if n := l.confirms.Load() - before; n != 0 {
		t.Fatalf("a committed write asked for %d confirmations", n)
	}
}

// answeredApply is namespace.Apply answered with the namespace's row.
type answeredApply struct{ namespace.Apply }

func (a answeredApply) AnswerRows() []fsm.RowRef {
	return []fsm.RowRef{{Table: namespaces.Table, Key: a.Name}, {Table: namespaces.Table, Key: "absent"}}
}

// TestPipelineAnswersFromItsOwnApply: an Answered command's outcome holds
// the rows it named as its own entry left them (a missing one as not
// found), and the entry's leader time; a retry of it (a duplicate) has
// none to show.
func TestPipelineAnswersFromItsOwnApply(t *testing.T) {
	f := newFixture(t, func(c *commands.PipelineConfig, fsm *fsm.FSM) { c.Answers = fsm })
	cmd := answeredApply{namespace.Apply{Name: "web", Description: "first"}}
	out, err := f.p.Run(context.Background(), "namespace.apply", commands.Request{CommandID: "k1"}, cmd)
	if err != nil {
		t.Fatal(err)
	}
	row, ok := out.Answered(namespaces.Table, "web")
	if !ok || !row.Found || row.Row.ModifyIndex != out.Index || row.Row.CreateIndex != out.Index || len(row.Row.Value) == 0 {
		t.Fatalf("answered row %+v (ok %v) for a write at %d", row, ok, out.Index)
	}
	if absent, ok := out.Answered(namespaces.Table, "absent"); !ok || absent.Found {
		t.Fatalf("absent row answered as %+v (ok %v)", absent, ok)
	}
	first := string(row.Row.Value) // its own copy, not the batch's memory
	if out.Time == 0 {
		t.Fatal("no leader time in the outcome")
	}
	// A later write to the same row leaves this answer as it was.
	if _, err := f.p.Run(context.Background(), "namespace.apply", commands.Request{},
		answeredApply{namespace.Apply{Name: "web", Description: "second"}}); err != nil {
		t.Fatal(err)
	}
	if again, _ := out.Answered(namespaces.Table, "web"); string(again.Row.Value) != first {
		t.Fatalf("the first answer changed: %+v", again)
	}
	dup, err := f.p.Run(context.Background(), "namespace.apply", commands.Request{CommandID: "k1"}, cmd)
	if err != nil || !dup.Duplicate || len(dup.Rows) != 0 || dup.Index != out.Index {
		t.Fatalf("retry: %+v, %v", dup, err)
	}
}
