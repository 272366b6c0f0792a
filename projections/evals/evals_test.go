package evals_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/evals"
	"github.com/ordoplane/ordo/projections/order"
	pt "github.com/ordoplane/ordo/projections/projectionstest"
	"github.com/ordoplane/ordo/projections/rebuild"
	archivelog "github.com/ordoplane/ordo/storage/archive"
	"github.com/ordoplane/ordo/storage/kv"
)

func eval(id, ns, job, status string) events.Evaluation {
	return events.Evaluation{ID: id, Namespace: ns, Priority: 50, Type: events.JobTypeService,
		TriggeredBy: events.EvalTriggerJobRegister, JobID: job, Status: status, CreateTime: pt.LeaderTime}
}

func scan(t *testing.T, v projections.View, q evals.Query) []string {
	t.Helper()
	var out []string
	if err := evals.Scan(v, q, func(e *evals.Eval) error {
		out = append(out, e.ID)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestProjection(t *testing.T) {
	store := pt.OpenStore(t)
	f := pt.NewFSM(t, store, evals.Projection{})
	v := projections.NewView(store)

	// Ids sort against creation order, so lists show which one they follow.
	pt.ApplyOne(t, f, 1, pt.Entry(t, "c1", &events.EvalsUpserted{Evals: []events.Evaluation{eval("zz", "default", "web", events.EvalStatusPending)}}))
	pt.ApplyOne(t, f, 2, pt.Entry(t, "c2", &events.EvalsUpserted{Evals: []events.Evaluation{
		eval("mm", "default", "api", events.EvalStatusPending), eval("aa", "other", "web", events.EvalStatusPending)}}))
	// An update keeps the creation order and the create index.
	done := eval("zz", "default", "web", events.EvalStatusComplete)
	done.NextEval, done.BlockedEval = "mm", "aa"
	pt.ApplyOne(t, f, 3, pt.Entry(t, "c3", &events.EvalsUpserted{Evals: []events.Evaluation{done}}))
	zz, err := evals.Get(v, "zz")
	if err != nil || zz.Status != events.EvalStatusComplete || zz.CreateIndex != 1 || zz.ModifyIndex != 3 {
		t.Fatalf("zz = %+v, %v", zz, err)
	}

	// N20: oldest first, newest first with Reverse.
	if got := scan(t, v, evals.Query{}); !reflect.DeepEqual(got, []string{"zz", "aa", "mm"}) {
		t.Fatalf("Scan = %v, want creation order", got)
	}
	if got := scan(t, v, evals.Query{Reverse: true}); !reflect.DeepEqual(got, []string{"mm", "aa", "zz"}) {
		t.Fatalf("Scan(reverse) = %v", got)
	}
	if got := scan(t, v, evals.Query{Namespace: "other"}); !reflect.DeepEqual(got, []string{"aa"}) {
		t.Fatalf("Scan(namespace other) = %v", got)
	}
	if got := scan(t, v, evals.Query{From: order.Key(2, "aa")}); !reflect.DeepEqual(got, []string{"aa", "mm"}) {
		t.Fatalf("Scan(from aa) = %v", got)
	}
	list, err := evals.ByJob(v, "default", "web")
	if err != nil || len(list) != 1 || list[0].ID != "zz" {
		t.Fatalf("ByJob(default, web) = %v, %v", list, err)
	}

	// N17: related evals are the next, previous and blocked ones.
	withRelated, err := evals.Related(v, zz)
	if err != nil || len(withRelated.RelatedEvals) != 2 || withRelated.RelatedEvals[0].ID != "mm" || withRelated.RelatedEvals[1].ID != "aa" {
		t.Fatalf("Related = %+v, %v", withRelated.RelatedEvals, err)
	}
	b, err := json.Marshal(withRelated)
	if err != nil || !strings.Contains(string(b), `"RelatedEvals":[{"ID":"mm"`) || !strings.Contains(string(b), `"WaitUntil":"0001-01-01T00:00:00Z"`) {
		t.Fatalf("JSON = %s, %v", b, err)
	}

	pt.ApplyOne(t, f, 4, pt.Entry(t, "c4", &events.EvalsDeleted{IDs: []string{"aa", "missing"}}))
	if _, err := evals.Get(v, "aa"); !errors.Is(err, projections.ErrNotFound) {
		t.Fatalf("Get(aa) after delete: %v", err)
	}
	checkIndexes(t, v)
	if got := scan(t, v, evals.Query{}); !reflect.DeepEqual(got, []string{"zz", "mm"}) {
		t.Fatalf("Scan after delete = %v", got)
	}
	if e, err := evals.Resolve(v, "m"); err != nil || e.ID != "mm" {
		t.Fatalf("Resolve(m) = %v, %v", e, err)
	}
	pt.CheckRebuildEqualsLive(t, store, evals.Projection{})
}

func checkIndexes(t *testing.T, v projections.View) {
	t.Helper()
	var byJob, byCreate []string
	err := v.Scan(evals.Table, "", false, func(id string, r projections.Row) error {
		e, err := evals.Get(v, id)
		if err != nil {
			return err
		}
		byJob = append(byJob, evals.JobKey(e.Namespace, e.JobID)+id)
		byCreate = append(byCreate, order.Key(r.CreateIndex, id))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for table, want := range map[string][]string{evals.ByJobTable: byJob, evals.ByCreateTable: byCreate} {
		got := pt.Keys(t, v, table)
		sort.Strings(want)
		if len(got) != len(want) || (len(got) > 0 && !reflect.DeepEqual(got, want)) {
			t.Fatalf("index %s = %q\nwant %q", table, got, want)
		}
	}
}

func TestRebuildEqualsLive(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	live := pt.OpenStore(t)
	f := pt.NewFSM(t, live, evals.Projection{})
	statuses := []string{events.EvalStatusPending, events.EvalStatusBlocked, events.EvalStatusComplete}
	for i := 1; i <= 200; i++ {
		var p events.Payload
		if rng.Intn(4) == 0 {
			p = &events.EvalsDeleted{IDs: []string{fmt.Sprint("e", rng.Intn(40))}}
		} else {
			e := eval(fmt.Sprint("e", rng.Intn(40)), fmt.Sprint("ns", rng.Intn(2)), fmt.Sprint("job", rng.Intn(3)), statuses[rng.Intn(3)])
			e.QueuedAllocations = map[string]int{"a": rng.Intn(3), "b": 1, "c": 2}
			p = &events.EvalsUpserted{Evals: []events.Evaluation{e}}
		}
		entry := pt.Entry(t, fmt.Sprint("c", i), p)
		entry.Time += int64(i)
		pt.ApplyOne(t, f, uint64(i), entry)
	}
	checkIndexes(t, projections.NewView(live))
	pt.CheckRebuildEqualsLive(t, live, evals.Projection{})
}

// A page delete that says where its evals' rows are (Deleted, filled at
// apply since it exists) removes exactly what one without it removes by
// reading the rows (an event archived before Deleted existed): each is
// replayed from an archive, as a rebuild does.
func TestPageDeleteWithAndWithoutDeleted(t *testing.T) {
	var stores []*kv.Store
	for _, known := range []bool{true, false} {
		src := pt.OpenStore(t)
		b := src.Batch()
		archive := func(index uint64, p events.Payload) {
			ev, err := events.New(fmt.Sprint("ev", index), p)
			if err != nil {
				t.Fatal(err)
			}
			ev.Index, ev.Time = index, pt.LeaderTime
			data, err := events.EncodeEvent(&ev)
			if err != nil {
				t.Fatal(err)
			}
			if err := archivelog.Append(b, index, 0, data); err != nil {
				t.Fatal(err)
			}
		}
		for i := 1; i <= 12; i++ {
			e := eval(fmt.Sprintf("e%02d", i), fmt.Sprint("ns", i%2), fmt.Sprint("job", i%3), events.EvalStatusPending)
			archive(uint64(i), &events.EvalsUpserted{Evals: []events.Evaluation{e}})
		}
		page := &events.EvalsPageDeleted{Filter: `Status == "pending"`, PageSize: 5}
		for _, i := range []int{3, 4, 5, 7, 11} {
			page.IDs = append(page.IDs, fmt.Sprintf("e%02d", i))
			if known {
				page.Deleted = append(page.Deleted, events.DeletedEval{Namespace: fmt.Sprint("ns", i%2), JobID: fmt.Sprint("job", i%3), CreateIndex: uint64(i)})
			}
		}
		archive(13, page)
		if err := b.Commit(); err != nil {
			t.Fatal(err)
		}
		dst := pt.OpenStore(t)
		if _, err := rebuild.Rebuild(src, dst, []projections.Projection{evals.Projection{}}, 0, nil); err != nil {
			t.Fatal(err)
		}
		v := projections.NewView(dst)
		checkIndexes(t, v)
		if got, want := scan(t, v, evals.Query{Namespace: "*"}), []string{"e01", "e02", "e06", "e08", "e09", "e10", "e12"}; !reflect.DeepEqual(got, want) {
			t.Fatalf("known=%v: evals after the page = %v, want %v", known, got, want)
		}
		stores = append(stores, dst)
	}
	projs := []projections.Projection{evals.Projection{}}
	if !reflect.DeepEqual(pt.Checksums(t, stores[0], projs), pt.Checksums(t, stores[1], projs)) {
		t.Fatal("a page with Deleted left other rows than one without")
	}
}
