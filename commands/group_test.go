package commands_test

import (
	"context"
	"errors"
	"testing"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/namespace"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/namespaces"
)

// TestRunGroupOneEntry: a group's commands append as one raft entry, each
// with its own events, correlation id and outcome at the entry's index.
func TestRunGroupOneEntry(t *testing.T) {
	f := newFixture(t)
	outs, errs := f.p.RunGroup(context.Background(), []commands.Grouped{
		{Name: "namespace.apply", Req: commands.Request{Actor: "alice"}, Cmd: namespace.Apply{Name: "a"}},
		{Name: "namespace.apply", Req: commands.Request{Actor: "bob", CommandID: "key-b"}, Cmd: namespace.Apply{Name: "b"}},
		{Name: "namespace.apply", Req: commands.Request{Actor: "carol"}, Cmd: namespace.Apply{Name: "c"}},
	})
	for i, err := range errs {
		if err != nil {
			t.Fatalf("command %d: %v", i, err)
		}
	}
	if f.log.appends != 1 {
		t.Fatalf("%d entries appended, want 1", f.log.appends)
	}
	for i, o := range outs {
		if o.Index != 1 || o.Duplicate || o.Time == 0 {
			t.Fatalf("outcome %d = %+v, want index 1 with its time", i, o)
		}
	}
	evs := f.events(t)
	if len(evs) != 3 {
		t.Fatalf("archive holds %d events, want 3", len(evs))
	}
	seen := map[string]bool{}
	for i, ev := range evs {
		if ev.Index != 1 || ev.Seq != uint32(i) || ev.Time != evs[0].Time {
			t.Fatalf("event %d at %d/%d (time %d), want 1/%d at the group's time", i, ev.Index, ev.Seq, ev.Time, i)
		}
		if want := []string{"alice", "bob", "carol"}[i]; ev.Actor != want {
			t.Fatalf("event %d actor %q, want %q", i, ev.Actor, want)
		}
		if seen[ev.CorrelationID] {
			t.Fatalf("correlation id %q shared by two commands", ev.CorrelationID)
		}
		seen[ev.CorrelationID] = true
	}
	if evs[1].CorrelationID != "key-b" {
		t.Fatalf("correlation id %q, want the command's id key-b", evs[1].CorrelationID)
	}
	// The idempotency key was recorded for its own command.
	again, err := f.p.Run(context.Background(), "namespace.apply", commands.Request{CommandID: "key-b"}, namespace.Apply{Name: "b"})
	if err != nil || !again.Duplicate || again.Index != 1 {
		t.Fatalf("retry of a grouped command: %+v, %v", again, err)
	}
}

// TestRunGroupEachOnItsOwn: an invalid command, one refused by the state
// when decided, and one refused at apply by an earlier command of the
// group leave the others applied; the refused one's retry keeps its answer.
func TestRunGroupEachOnItsOwn(t *testing.T) {
	f := newFixture(t)
	f.log.applyRaw(t, 1, "seed", &events.NamespaceUpserted{Namespace: events.Namespace{Name: "p"}})
	cmds := []commands.Grouped{
		{Name: "namespace.apply", Cmd: namespace.Apply{Name: "bad_name!"}},
		{Name: "namespace.delete", Cmd: namespace.Delete{Name: "p"}},
		{Name: "namespace.delete", Req: commands.Request{CommandID: "late"}, Cmd: namespace.Delete{Name: "p"}},
		{Name: "namespace.delete", Cmd: namespace.Delete{Name: "missing"}},
		{Name: "namespace.apply", Cmd: namespace.Apply{Name: "q"}},
	}
	outs, errs := f.p.RunGroup(context.Background(), cmds)
	wantStatus := []int{400, 200, 409, 404, 200}
	for i, want := range wantStatus {
		got := 200
		if errs[i] != nil {
			got = commands.Status(errs[i])
		}
		if got != want {
			t.Fatalf("command %d: status %d (%v), want %d", i, got, errs[i], want)
		}
	}
	var ce *commands.ConflictError
	if !errors.As(errs[2], &ce) || ce.Precondition.Key != "p" {
		t.Fatalf("the second delete: %v, want a conflict on p", errs[2])
	}
	if outs[1].Index != 2 || outs[4].Index != 2 || f.log.appends != 1 {
		t.Fatalf("outcomes %+v, %d appends: want one entry at index 2", outs, f.log.appends)
	}
	// The applied commands' events number on from each other: the refused one took no sequence.
	evs := f.events(t)
	if len(evs) != 3 || evs[1].Type != "NamespaceDeleted" || evs[1].Seq != 0 || evs[2].Type != "NamespaceUpserted" || evs[2].Seq != 1 {
		t.Fatalf("archive %+v", evs)
	}
	snap := f.store.Snapshot()
	defer snap.Close()
	if _, err := namespaces.Get(projections.NewView(snap), "p"); !errors.Is(err, projections.ErrNotFound) {
		t.Fatalf("p after the group: %v, want deleted", err)
	}
	if _, err := namespaces.Get(projections.NewView(snap), "q"); err != nil {
		t.Fatalf("q after the group: %v", err)
	}
	_, err := f.p.Run(context.Background(), "namespace.delete", commands.Request{CommandID: "late"}, namespace.Delete{Name: "p"})
	if commands.Status(err) != 409 {
		t.Fatalf("retry of the refused grouped command: %v, want its recorded 409", err)
	}
}

// TestRunGroupSameKeyTwice: two commands of one group with one idempotency
// key apply once; the second is the first's duplicate.
func TestRunGroupSameKeyTwice(t *testing.T) {
	f := newFixture(t)
	req := commands.Request{CommandID: "twice"}
	outs, errs := f.p.RunGroup(context.Background(), []commands.Grouped{
		{Name: "namespace.apply", Req: req, Cmd: namespace.Apply{Name: "a"}},
		{Name: "namespace.apply", Req: req, Cmd: namespace.Apply{Name: "a"}},
	})
	if errs[0] != nil || errs[1] != nil {
		t.Fatal(errs)
	}
	if outs[0].Duplicate || !outs[1].Duplicate || outs[1].Index != outs[0].Index {
		t.Fatalf("outcomes %+v", outs)
	}
	if n := f.archiveLen(t); n != 1 {
		t.Fatalf("archive holds %d events, want 1", n)
	}
}

// TestRunGroupNotLeader: a group whose append fails answers every decided
// command with the failure, and the refused ones with their own.
func TestRunGroupNotLeader(t *testing.T) {
	f := newFixture(t)
	f.log.err = errors.Join(commands.ErrNoLeader)
	_, errs := f.p.RunGroup(context.Background(), []commands.Grouped{
		{Name: "namespace.apply", Cmd: namespace.Apply{Name: "a"}},
		{Name: "namespace.apply", Cmd: namespace.Apply{Name: "bad_name!"}},
		{Name: "namespace.apply", Cmd: namespace.Apply{Name: "b"}},
	})
	if !errors.Is(errs[0], commands.ErrNoLeader) || !errors.Is(errs[2], commands.ErrNoLeader) || commands.Status(errs[1]) != 400 {
		t.Fatalf("errors %v", errs)
	}
}
