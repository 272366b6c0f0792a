package history_test

import (
	"fmt"
	"math/rand"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/history"
	"github.com/ordoplane/ordo/projections/history/summary"
	pt "github.com/ordoplane/ordo/projections/projectionstest"
	"github.com/ordoplane/ordo/storage/kv"
)

// second returns the leader time of entry i in these tests.
func second(i int) int64 { return pt.LeaderTime + int64(i)*int64(time.Second) }

// recorder returns a store fed through the FSM (every projection) and a
// function that applies ps as entry i at second(i), by actor(i) when
// actor is not nil.
func recorder(t *testing.T, actor func(i int) string) (*kv.Store, func(i int, ps ...events.Payload)) {
	t.Helper()
	store := pt.OpenStore(t)
	f := pt.NewFSM(t, store)
	return store, func(i int, ps ...events.Payload) {
		t.Helper()
		e := pt.Entry(t, fmt.Sprint("c", i), ps...)
		e.Time = second(i)
		if actor != nil {
			e.Actor = actor(i)
		}
		if r := pt.ApplyOne(t, f, uint64(i), e); r.Err != nil {
			t.Fatal(r.Err)
		}
	}
}

// allocLife records an allocation's whole life, entry i at second(i),
// with an unrelated alloc's events between: placed (1), running (3),
// desired stop (5), complete (7).
func allocLife(t *testing.T) *kv.Store {
	t.Helper()
	store, apply := recorder(t, func(i int) string { return fmt.Sprint("actor-", i) })
	client := func(id, status string) *events.AllocsClientUpdated {
		return &events.AllocsClientUpdated{NodeID: "n1", Updates: []events.AllocClientUpdate{{ID: id, ClientStatus: status}}}
	}
	apply(1, &events.AllocsPlaced{EvalID: "e1", Allocs: []events.Allocation{alloc("a1", "n1", "default", "web")}})
	apply(2, &events.AllocsPlaced{EvalID: "e1", Allocs: []events.Allocation{alloc("other", "n1", "default", "web")}})
	apply(3, client("a1", events.AllocClientRunning))
	apply(4, client("other", events.AllocClientRunning))
	apply(5, &events.AllocsDesiredUpdated{EvalID: "e2", Updates: []events.AllocDesiredUpdate{{ID: "a1",
		DesiredStatus: events.AllocDesiredStop, DesiredDescription: "alloc not needed due to job being stopped"}}})
	apply(6, client("other", events.AllocClientFailed))
	apply(7, client("a1", events.AllocClientComplete))
	return store
}

func timeline(t *testing.T, r kv.Reader, q history.Query) history.Page {
	t.Helper()
	pg, err := history.Timeline(projections.NewView(r), q)
	if err != nil {
		t.Fatal(err)
	}
	return pg
}

func summaries(evs []history.Event) []string {
	var out []string
	for _, e := range evs {
		out = append(out, fmt.Sprintf("%d %s: %s", e.Index, e.Type, e.Summary))
	}
	return out
}

func TestTimelineOfAnAlloc(t *testing.T) {
	store := allocLife(t)
	pg := timeline(t, store, history.Query{Kind: events.KindAlloc, ID: "a1"})
	want := []string{
		"1 AllocsPlaced: placed on node n1 by eval e1 (web.web[0], job version 0)",
		"3 AllocsClientUpdated: client status pending → running",
		"5 AllocsDesiredUpdated: desired status run → stop (alloc not needed due to job being stopped), by eval e2",
		"7 AllocsClientUpdated: client status running → complete",
	}
	if got := summaries(pg.Events); !reflect.DeepEqual(got, want) {
		t.Fatalf("timeline:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if pg.Next != (history.Pos{}) {
		t.Fatalf("a whole timeline has a next page: %v", pg.Next)
	}
	e := pg.Events[1]
	if !e.Time.Equal(time.Unix(0, second(3))) || e.Actor != "actor-3" || e.CorrelationID != "c3" || e.Version != 1 || e.Payload != nil {
		t.Fatalf("envelope of the running event: %+v", e)
	}
	if want := []summary.Change{{Field: "ClientStatus", Old: "pending", New: "running"}}; !reflect.DeepEqual(e.Changes, want) {
		t.Fatalf("changes %+v, want %+v", e.Changes, want)
	}
	// Payloads on demand, redacted JSON.
	pg = timeline(t, store, history.Query{Kind: events.KindAlloc, ID: "a1", Payload: true, FromIndex: 7})
	if len(pg.Events) != 1 || pg.Events[0].Payload["NodeID"] != "n1" {
		t.Fatalf("payload: %+v", pg.Events)
	}
}

// TestTimelineWindows checks that any window of the timeline shows the
// same lines, old values included, as the whole timeline does.
func TestTimelineWindows(t *testing.T) {
	store := allocLife(t)
	q := history.Query{Kind: events.KindAlloc, ID: "a1"}
	whole := timeline(t, store, q).Events
	for _, tc := range []struct {
		name string
		q    history.Query
		want []uint64
	}{
		{"from index", history.Query{FromIndex: 4}, []uint64{5, 7}},
		{"to index", history.Query{ToIndex: 5}, []uint64{1, 3, 5}},
		{"index window", history.Query{FromIndex: 3, ToIndex: 3}, []uint64{3}},
		{"since", history.Query{Since: second(3)}, []uint64{3, 5, 7}},
		{"until", history.Query{Until: second(5)}, []uint64{1, 3, 5}},
		{"since and until", history.Query{Since: second(2), Until: second(6)}, []uint64{3, 5}},
		{"nothing", history.Query{Since: second(8)}, nil},
		{"reversed", history.Query{Reverse: true, Since: second(3)}, []uint64{7, 5, 3}},
	} {
		tc.q.Kind, tc.q.ID = q.Kind, q.ID
		var got []uint64
		for _, e := range timeline(t, store, tc.q).Events {
			got = append(got, e.Index)
			i := slices.IndexFunc(whole, func(w history.Event) bool { return w.Index == e.Index })
			if !reflect.DeepEqual(e, whole[i]) {
				t.Errorf("%s: event %d is %+v in the window, %+v in the whole timeline", tc.name, e.Index, e, whole[i])
			}
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: indexes %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestTimelinePaging pages through random histories with random page
// sizes and bounds, both ways: the pages joined equal the unpaged answer.
func TestTimelinePaging(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	store := pt.OpenStore(t)
	f := pt.NewFSM(t, store)
	logs := randomLogs(t, rng, 200)
	for len(logs) > 0 {
		n := min(len(logs), 1+rng.Intn(8))
		pt.Apply(t, f, logs[:n]...)
		logs = logs[n:]
	}
	entities := []history.Query{
		{Kind: events.KindNamespace, ID: "ns0"}, {Kind: events.KindNode, ID: "n1"}, {Kind: events.KindAlloc, ID: "a3"},
		{Kind: events.KindJob, ID: history.JobID("ns1", "job2")}, {Kind: events.KindEval, ID: "e4"},
	}
	total := 0
	for i := range 60 {
		q := entities[i%len(entities)]
		q.Reverse = rng.Intn(2) == 0
		if rng.Intn(3) == 0 {
			q.FromIndex = uint64(rng.Intn(100))
		}
		if rng.Intn(3) == 0 {
			q.Since = second(50 + rng.Intn(150))
		}
		if rng.Intn(3) == 0 {
			q.Until = second(rng.Intn(200))
		}
		all := timeline(t, store, q).Events
		q.PerPage = 1 + rng.Intn(7)
		var joined []history.Event
		for pages := 0; ; pages++ {
			if pages > 300 {
				t.Fatalf("%+v: paging does not end", q)
			}
			pg := timeline(t, store, q)
			if len(pg.Events) > q.PerPage {
				t.Fatalf("%+v: %d events on a page", q, len(pg.Events))
			}
			joined = append(joined, pg.Events...)
			if pg.Next == (history.Pos{}) {
				break
			}
			q.Next = pg.Next
		}
		total += len(all)
		if len(joined) != len(all) || (len(all) > 0 && !reflect.DeepEqual(joined, all)) {
			t.Fatalf("%+v: pages joined give %d events, unpaged %d", q, len(joined), len(all))
		}
		sorted := slices.IsSortedFunc(all, func(a, b history.Event) int {
			pa, pb := history.Pos{Index: a.Index, Seq: a.Seq}, history.Pos{Index: b.Index, Seq: b.Seq}
			if q.Reverse {
				pa, pb = pb, pa
			}
			if pa.Less(pb) {
				return -1
			}
			return 1
		})
		if !sorted {
			t.Fatalf("%+v: events out of order", q)
		}
	}
	if total < 300 {
		t.Fatalf("the queries selected only %d events in all; the test pages too little", total)
	}
}
