package variables_test

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/all"
	"github.com/ordoplane/ordo/projections/fsm"
	pt "github.com/ordoplane/ordo/projections/projectionstest"
	"github.com/ordoplane/ordo/projections/rebuild"
	"github.com/ordoplane/ordo/projections/variables"
)

func put(ns, path, key string, size int) *events.VariableUpserted {
	return &events.VariableUpserted{Namespace: ns, Path: path, KeyID: key, Data: bytes.Repeat([]byte{0xAB}, size)}
}

func nsUp(name string, quota int64) *events.NamespaceUpserted {
	return &events.NamespaceUpserted{Namespace: events.Namespace{Name: name, VariablesQuota: quota}}
}

func usage(t *testing.T, v projections.View, ns string) variables.Usage {
	t.Helper()
	u, err := variables.UsageOf(v, ns)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// TestUsageTrackedAtApply (N13): creates, updates that grow and shrink,
// and deletes move a namespace's usage by the encrypted sizes, in the
// same apply; a delete of a missing variable moves nothing; the usage row
// goes with the last variable; a rebuild from the archive computes the
// same usage, rows and index.
func TestUsageTrackedAtApply(t *testing.T) {
	store := pt.OpenStore(t)
	f := pt.NewFSM(t, store)
	v := projections.NewView(store)
	step := uint64(0)
	apply := func(ps ...events.Payload) {
		t.Helper()
		step++
		if res := pt.ApplyOne(t, f, step, pt.Entry(t, "", ps...)); res.Err != nil {
			t.Fatal(res.Err)
		}
	}
	apply(nsUp("a", 0), nsUp("b", 0))
	apply(put("a", "db", "k1", 100), put("a", "web/tls", "k1", 40), put("b", "x", "k1", 7))
	if got := usage(t, v, "a"); got != (variables.Usage{Bytes: 140, Count: 2}) {
		t.Fatalf("after creates: %+v", got)
	}
	apply(put("a", "db", "k2", 160)) // grows, re-keyed
	if got := usage(t, v, "a"); got != (variables.Usage{Bytes: 200, Count: 2}) {
		t.Fatalf("after growing update: %+v", got)
	}
	apply(put("a", "web/tls", "k1", 10)) // shrinks
	if got := usage(t, v, "a"); got != (variables.Usage{Bytes: 170, Count: 2}) {
		t.Fatalf("after shrinking update: %+v", got)
	}
	apply(&events.VariableDeleted{Namespace: "a", Path: "missing"})
	apply(&events.VariableDeleted{Namespace: "a", Path: "db"})
	if got := usage(t, v, "a"); got != (variables.Usage{Bytes: 10, Count: 1}) {
		t.Fatalf("after delete: %+v", got)
	}
	if got := usage(t, v, "b"); got != (variables.Usage{Bytes: 7, Count: 1}) {
		t.Fatalf("b: %+v", got)
	}
	// The key index follows re-keying and deletes.
	var byK1, byK2 []string
	for key, out := range map[string]*[]string{"k1": &byK1, "k2": &byK2} {
		if err := variables.ByKey(v, key, func(ns, path string) error { *out = append(*out, ns+"/"+path); return nil }); err != nil {
			t.Fatal(err)
		}
	}
	if !reflect.DeepEqual(byK1, []string{"a/web/tls", "b/x"}) || byK2 != nil {
		t.Fatalf("by key: k1 %v k2 %v", byK1, byK2)
	}
	// Metadata: indexes and leader times; create kept across updates.
	got, err := variables.Get(v, "a", "web/tls")
	if err != nil {
		t.Fatal(err)
	}
	if got.CreateIndex != 2 || got.ModifyIndex != 4 || got.CreateTime != pt.LeaderTime || got.ModifyTime != pt.LeaderTime || got.KeyID != "k1" || got.Size() != 10 {
		t.Fatalf("variable = %+v", got)
	}
	rebuilt := pt.OpenStore(t)
	if _, err := rebuild.Rebuild(store, rebuilt, all.Projections(), 0, nil); err != nil {
		t.Fatal(err)
	}
	projs := []projections.Projection{variables.Projection{}}
	if !reflect.DeepEqual(pt.Checksums(t, rebuilt, projs), pt.Checksums(t, store, projs)) {
		t.Fatal("a rebuild computed other variables rows or usage")
	}
	if got := usage(t, projections.NewView(rebuilt), "a"); got != (variables.Usage{Bytes: 10, Count: 1}) {
		t.Fatalf("rebuilt usage: %+v", got)
	}
	apply(&events.VariableDeleted{Namespace: "a", Path: "web/tls"})
	if _, err := v.Get(variables.UsageTable, "a"); !errors.Is(err, projections.ErrNotFound) {
		t.Fatalf("usage row of an empty namespace: %v", err)
	}
}

// TestQuotaRefusedAtApply (N13): a write that would take a namespace past
// its VariablesQuota is rejected at apply, against the usage at that
// moment (two writes decided on the same state cannot both fit), and
// nothing of it is recorded; writes that do not grow usage still pass
// once the quota is lowered below it.
func TestQuotaRefusedAtApply(t *testing.T) {
	store := pt.OpenStore(t)
	f := pt.NewFSM(t, store)
	v := projections.NewView(store)
	entry := func(p *events.VariableUpserted) *events.Entry {
		e := pt.Entry(t, "", p)
		e.Preconditions = []events.Precondition{variables.QuotaPrecondition(p.Namespace, p.Path, p.Size())}
		return e
	}
	pt.ApplyOne(t, f, 1, pt.Entry(t, "", nsUp("q", 100)))
	// Both decided against an empty namespace; only the first fits.
	first, second := entry(put("q", "a", "k", 60)), entry(put("q", "b", "k", 60))
	if res := pt.ApplyOne(t, f, 2, first); res.Err != nil {
		t.Fatal(res.Err)
	}
	res := pt.ApplyOne(t, f, 3, second)
	var re *fsm.RejectedError
	if !errors.As(res.Err, &re) || !strings.Contains(re.Reason, `namespace "q" variables quota exceeded`) ||
		!strings.Contains(re.Reason, "120 bytes, over the quota of 100") {
		t.Fatalf("second write: %v", res.Err)
	}
	if _, err := variables.Get(v, "q", "b"); !errors.Is(err, projections.ErrNotFound) {
		t.Fatalf("a refused write was stored: %v", err)
	}
	if got := usage(t, v, "q"); got != (variables.Usage{Bytes: 60, Count: 1}) {
		t.Fatalf("usage after refusal: %+v", got)
	}
	// Exactly at the quota fits; replacing a variable counts only the growth.
	if res := pt.ApplyOne(t, f, 4, entry(put("q", "b", "k", 40))); res.Err != nil {
		t.Fatalf("write to exactly the quota: %v", res.Err)
	}
	if res := pt.ApplyOne(t, f, 5, entry(put("q", "a", "k", 61))); res.Err == nil {
		t.Fatal("growing a variable past the quota was accepted")
	}
	// Lower the quota under the usage: shrinking still passes, growing not.
	pt.ApplyOne(t, f, 6, pt.Entry(t, "", nsUp("q", 50)))
	if res := pt.ApplyOne(t, f, 7, entry(put("q", "a", "k", 30))); res.Err != nil {
		t.Fatalf("shrinking under a lowered quota: %v", res.Err)
	}
	if res := pt.ApplyOne(t, f, 8, entry(put("q", "a", "k", 31))); res.Err == nil {
		t.Fatal("growing while over a lowered quota was accepted")
	}
	// No quota: anything fits.
	pt.ApplyOne(t, f, 9, pt.Entry(t, "", nsUp("q", 0)))
	if res := pt.ApplyOne(t, f, 10, entry(put("q", "c", "k", 10_000))); res.Err != nil {
		t.Fatal(res.Err)
	}
}

func TestScan(t *testing.T) {
	store := pt.OpenStore(t)
	f := pt.NewFSM(t, store)
	pt.ApplyOne(t, f, 1, pt.Entry(t, "", nsUp("a", 0), nsUp("b", 0),
		put("a", "app/db", "k", 1), put("a", "app/web", "k", 1), put("a", "other", "k", 1), put("b", "app/x", "k", 1)))
	v := projections.NewView(store)
	paths := func(q variables.Query) []string {
		var out []string
		if err := variables.Scan(v, q, func(vr *variables.Variable) error {
			out = append(out, vr.Namespace+"/"+vr.Path)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	for _, tc := range []struct {
		q    variables.Query
		want []string
	}{
		{variables.Query{Namespace: "a"}, []string{"a/app/db", "a/app/web", "a/other"}},
		{variables.Query{Namespace: "a", Prefix: "app/"}, []string{"a/app/db", "a/app/web"}},
		{variables.Query{Namespace: "*", Prefix: "app"}, []string{"a/app/db", "a/app/web", "b/app/x"}},
		{variables.Query{Namespace: "a", From: variables.Key("a", "app/web")}, []string{"a/app/web", "a/other"}},
		{variables.Query{Namespace: "a", Reverse: true}, []string{"a/other", "a/app/web", "a/app/db"}},
		{variables.Query{Namespace: "c"}, nil},
	} {
		if got := paths(tc.q); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%+v: %v, want %v", tc.q, got, tc.want)
		}
	}
}
