package history_test

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/history"
	"github.com/ordoplane/ordo/storage/kv"
)

// jobLife records job web's life with job other's events between: web's
// evals e1 (its registration) and e2 (created beside other's eval eo, so
// keyed to other, as a node update's evals are), allocs a1 and a2, and
// client reports that name allocations and a node, not the job.
func jobLife(t *testing.T) *kv.Store {
	t.Helper()
	store, apply := recorder(t, nil)
	eval := func(id, job, status string) events.Evaluation {
		return events.Evaluation{ID: id, Namespace: "default", JobID: job, Type: events.JobTypeService,
			TriggeredBy: "job-register", Status: status}
	}
	client := func(status string, ids ...string) *events.AllocsClientUpdated {
		p := &events.AllocsClientUpdated{NodeID: "n1"}
		for _, id := range ids {
			p.Updates = append(p.Updates, events.AllocClientUpdate{ID: id, ClientStatus: status})
		}
		return p
	}
	a2 := alloc("a2", "n1", "default", "web")
	a2.Name = "web.web[1]"
	apply(1, jobReg("default", "web", 0, 2))
	apply(2, jobReg("default", "other", 0, 1))
	apply(3, &events.EvalsUpserted{Evals: []events.Evaluation{eval("e1", "web", events.EvalStatusPending)}})
	apply(4, &events.AllocsPlaced{EvalID: "e1", Allocs: []events.Allocation{alloc("a1", "n1", "default", "web"), a2}})
	apply(5, &events.AllocsPlaced{EvalID: "eo", Allocs: []events.Allocation{alloc("o1", "n1", "default", "other")}})
	apply(6, &events.EvalsUpserted{Evals: []events.Evaluation{eval("e1", "web", events.EvalStatusComplete)}})
	apply(7, client(events.AllocClientRunning, "a1", "a2", "o1"))
	apply(8, &events.EvalsUpserted{Evals: []events.Evaluation{eval("eo", "other", events.EvalStatusPending),
		eval("e2", "web", events.EvalStatusPending)}})
	apply(9, &events.AllocsDesiredUpdated{EvalID: "e2", Updates: []events.AllocDesiredUpdate{{ID: "a1",
		DesiredStatus: events.AllocDesiredStop, DesiredDescription: "alloc not needed"}}})
	apply(10, &events.EvalsUpserted{Evals: []events.Evaluation{eval("e2", "web", events.EvalStatusComplete)}})
	apply(11, client(events.AllocClientComplete, "a1"))
	apply(12, client(events.AllocClientFailed, "o1"))
	return store
}

// lines renders a related timeline as "index entity: type: summary".
func lines(evs []history.Event) []string {
	var out []string
	for _, e := range evs {
		out = append(out, fmt.Sprintf("%d %s %s: %s: %s", e.Index, e.EntityKind, e.EntityID, e.Type, e.Summary))
	}
	return out
}

// TestRelatedTimelineOfAJob: a job's related timeline holds its own events
// and what happened to its evals and allocations — client reports and
// desired updates that carry no job key, an eval created beside another
// job's — each once, in commit order, told from the entity it is about;
// another job's events stay out.
func TestRelatedTimelineOfAJob(t *testing.T) {
	store := jobLife(t)
	id := history.JobID("default", "web")
	members, err := history.Members(projections.NewView(store), id, nil)
	if err != nil {
		t.Fatal(err)
	}
	wantMembers := []history.Entity{{Kind: "eval", ID: "e1"}, {Kind: "alloc", ID: "a1"}, {Kind: "alloc", ID: "a2"}, {Kind: "eval", ID: "e2"}}
	if !reflect.DeepEqual(members, wantMembers) {
		t.Errorf("members %v, want %v", members, wantMembers)
	}
	own := timeline(t, store, history.Query{Kind: events.KindJob, ID: id})
	got := timeline(t, store, history.Query{Kind: events.KindJob, ID: id, Related: true})
	want := []string{
		"1 job default/web: JobRegistered: " + own.Events[0].Summary,
		"3 job default/web: EvalsUpserted: " + own.Events[1].Summary,
		"4 job default/web: AllocsPlaced: " + own.Events[2].Summary,
		"6 job default/web: EvalsUpserted: " + own.Events[3].Summary,
		"7 alloc a1: AllocsClientUpdated: client status pending → running",
		"7 alloc a2: AllocsClientUpdated: client status pending → running",
		"8 eval e2: EvalsUpserted: " + timeline(t, store, history.Query{Kind: events.KindEval, ID: "e2"}).Events[0].Summary,
		"9 alloc a1: AllocsDesiredUpdated: desired status run → stop (alloc not needed), by eval e2",
		"10 job default/web: EvalsUpserted: " + own.Events[4].Summary,
		"11 alloc a1: AllocsClientUpdated: client status running → complete",
	}
	if l := lines(got.Events); !reflect.DeepEqual(l, want) {
		t.Fatalf("related timeline:\n%s\nwant:\n%s", strings.Join(l, "\n"), strings.Join(want, "\n"))
	}
	// A member's line is its own timeline's, changes included.
	a1 := timeline(t, store, history.Query{Kind: events.KindAlloc, ID: "a1"}).Events
	for _, e := range got.Events {
		if e.EntityID != "a1" {
			continue
		}
		i := slices.IndexFunc(a1, func(w history.Event) bool { return w.Index == e.Index })
		w := a1[i]
		w.EntityKind, w.EntityID = "alloc", "a1"
		if !reflect.DeepEqual(e, w) {
			t.Errorf("event %d: %+v on the job's related timeline, %+v on the alloc's", e.Index, e, w)
		}
	}
	// Without Related the job's timeline is as before: its own events, unlabelled.
	for _, e := range own.Events {
		if e.EntityKind != "" || e.EntityID != "" {
			t.Errorf("the job's own timeline labels event %d: %+v", e.Index, e)
		}
	}
	if _, err := history.Timeline(projections.NewView(store), history.Query{Kind: events.KindAlloc, ID: "a1", Related: true}); err == nil {
		t.Error("related events of an alloc: no error")
	}
	_, err = history.Timeline(projections.NewView(store), history.Query{Kind: events.KindJob, ID: "default/nope", Related: true})
	if !errors.Is(err, projections.ErrNotFound) {
		t.Errorf("related timeline of an unknown job: %v", err)
	}
}

// TestRelatedTimelinePaging: pages of every size, both ways and within
// windows, joined, equal the unpaged related timeline; a page never splits
// an event's lines and holds at most PerPage events.
func TestRelatedTimelinePaging(t *testing.T) {
	store := jobLife(t)
	base := history.Query{Kind: events.KindJob, ID: history.JobID("default", "web"), Related: true}
	for _, w := range []history.Query{{}, {FromIndex: 5}, {ToIndex: 8}, {Since: second(7), Until: second(10)}} {
		for _, reverse := range []bool{false, true} {
			q := base
			q.FromIndex, q.ToIndex, q.Since, q.Until, q.Reverse = w.FromIndex, w.ToIndex, w.Since, w.Until, reverse
			all := timeline(t, store, q).Events
			if len(all) == 0 {
				t.Fatalf("%+v selects nothing", q)
			}
			for size := 1; size <= 4; size++ {
				q.PerPage, q.Next = size, history.Pos{}
				var joined []history.Event
				for pages := 0; ; pages++ {
					if pages > 50 {
						t.Fatalf("%+v: paging does not end", q)
					}
					pg := timeline(t, store, q)
					distinct := map[history.Pos]bool{}
					for _, e := range pg.Events {
						distinct[history.Pos{Index: e.Index, Seq: e.Seq}] = true
					}
					if len(distinct) > size {
						t.Fatalf("%+v: %d events on a page", q, len(distinct))
					}
					joined = append(joined, pg.Events...)
					if pg.Next == (history.Pos{}) {
						break
					}
					q.Next = pg.Next
				}
				if !reflect.DeepEqual(joined, all) {
					t.Fatalf("%+v: pages joined:\n%s\nunpaged:\n%s", q, strings.Join(lines(joined), "\n"), strings.Join(lines(all), "\n"))
				}
			}
			// In commit order (or its reverse), each event's lines together.
			for i := 1; i < len(all); i++ {
				a, b := history.Pos{Index: all[i-1].Index, Seq: all[i-1].Seq}, history.Pos{Index: all[i].Index, Seq: all[i].Seq}
				if reverse {
					a, b = b, a
				}
				if b.Less(a) {
					t.Fatalf("%+v: out of order at %d", q, i)
				}
			}
		}
	}
}
