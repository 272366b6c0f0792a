package httpapi_test

import (
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/hashicorp/nomad/api"

	"github.com/ordoplane/ordo/projections/jobs"
)

// pageAll follows X-Nomad-NextToken through every page of path (which
// already has a query) at per_page=n, decoding each page with ids.
func (d *devAgent) pageAll(t *testing.T, path string, n int, ids func(body response) []string) []string {
	t.Helper()
	got := []string{}
	token := ""
	for pages := 0; ; pages++ {
		if pages > 10 {
			t.Fatalf("%s: paging never ended", path)
		}
		r := d.do(t, "GET", path+"&per_page="+jsonNum(uint64(n))+"&next_token="+urlq(token), nil)
		if r.status != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, r.status, r.body)
		}
		page := ids(r)
		if len(page) > n {
			t.Fatalf("%s: a page of %d for per_page=%d", path, len(page), n)
		}
		got = append(got, page...)
		if token = r.header.Get("X-Nomad-NextToken"); token == "" {
			return got
		}
	}
}

// wantBadParams checks that each query of path is a 400 naming its field.
func (d *devAgent) wantBadParams(t *testing.T, path string, cases []struct{ query, field string }) {
	t.Helper()
	for _, tc := range cases {
		r := d.do(t, "GET", path+tc.query, nil)
		if r.status != http.StatusBadRequest || r.apiError(t).Field != tc.field {
			t.Errorf("GET %s%s: %d %s; want 400 naming %s", path, tc.query, r.status, r.body, tc.field)
		}
	}
}

func jobIDs(t *testing.T) func(response) []string {
	return func(r response) []string {
		var list []jobs.Stub
		r.decode(t, &list)
		out := []string{}
		for _, j := range list {
			out = append(out, j.Namespace+"/"+j.ID)
		}
		return out
	}
}

// TestJobListPagedAndFiltered: GET /v1/jobs lists by namespace then id
// (Nomad's order, not creation order), filters on the stub's JSON, pages
// with "<namespace>.<id>" tokens both ways and with namespace=*.
func TestJobListPagedAndFiltered(t *testing.T) {
	t.Parallel()
	d := startAgent(t)
	d.putNamespace(t, "payments", "")
	withMeta := func(id, team string) string {
		return strings.Replace(jobJSON(id, 1), `"Type":"batch"`, `"Type":"batch","Meta":{"team":"`+team+`"}`, 1)
	}
	// Created in an order that is not id order.
	d.registerJob(t, withMeta("web", "a"))
	d.registerJob(t, withMeta("api", "b"))
	d.registerJob(t, withMeta("db", "a"))
	d.registerJob(t, withMeta("worker.v2", "b")) // a dot in the id survives its token
	if r := d.do(t, "PUT", "/v1/jobs?namespace=payments", strings.NewReader(withMeta("cache", "a"))); r.status != http.StatusOK {
		t.Fatalf("register in payments: %d %s", r.status, r.body)
	}
	byID := []string{"default/api", "default/db", "default/web", "default/worker.v2"}
	all := append([]string{"default/api", "default/db", "default/web", "default/worker.v2"}, "payments/cache")
	rev := func(s []string) []string {
		out := append([]string{}, s...)
		for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
			out[i], out[j] = out[j], out[i]
		}
		return out
	}

	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"", byID},
		{"?reverse=true", rev(byID)},
		{"?namespace=*", all},
		{"?namespace=*&reverse=true", rev(all)},
		{"?namespace=payments", []string{"payments/cache"}},
		{"?prefix=w", []string{"default/web", "default/worker.v2"}},
		{"?namespace=*&prefix=c", []string{"payments/cache"}},
		// The filter sees Meta though the answer shows it only with meta=true.
		{"?filter=" + urlq(`Meta.team == "a"`), []string{"default/db", "default/web"}},
		{"?namespace=*&reverse=true&filter=" + urlq(`Meta.team == "a"`), []string{"payments/cache", "default/web", "default/db"}},
		{"?filter=" + urlq(`ID matches "^w"`), []string{"default/web", "default/worker.v2"}},
	} {
		r := d.do(t, "GET", "/v1/jobs"+tc.query, nil)
		if r.status != http.StatusOK {
			t.Fatalf("GET /v1/jobs%s: %d %s", tc.query, r.status, r.body)
		}
		if got := jobIDs(t)(r); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("GET /v1/jobs%s = %v, want %v", tc.query, got, tc.want)
		}
		if strings.Contains(string(r.body), `"Meta"`) {
			t.Errorf("GET /v1/jobs%s shows Meta without meta=true: %s", tc.query, r.body)
		}
	}
	var shown []jobs.Stub
	d.getJSON(t, "/v1/jobs?meta=true&prefix=web", &shown)
	if len(shown) != 1 || shown[0].Meta["team"] != "a" {
		t.Errorf("meta=true list = %+v", shown)
	}

	for _, tc := range []struct {
		query string
		n     int
		want  []string
	}{
		{"?namespace=*", 2, all},
		{"?namespace=*&reverse=true", 2, rev(all)},
		{"?reverse=false", 3, byID},
		{"?reverse=true", 1, rev(byID)},
		{"?namespace=*&filter=" + urlq(`Meta.team == "a"`), 1, []string{"default/db", "default/web", "payments/cache"}},
	} {
		if got := d.pageAll(t, "/v1/jobs"+tc.query, tc.n, jobIDs(t)); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("paged /v1/jobs%s per %d = %v, want %v", tc.query, tc.n, got, tc.want)
		}
	}
	// The token names the next job as Nomad's does.
	r := d.do(t, "GET", "/v1/jobs?per_page=2", nil)
	if tok := r.header.Get("X-Nomad-NextToken"); tok != "default.web" {
		t.Errorf("next token %q, want default.web", tok)
	}

	// The nomad/api client pages and filters the same way (it sorts each
	// page by id itself, so one job a page shows the order).
	c, err := api.NewClient(&api.Config{Address: d.base})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	opts := &api.QueryOptions{Namespace: "*", PerPage: 1, Reverse: true, Filter: `Meta.team == "b"`}
	for pages := 0; ; pages++ {
		if pages > 5 {
			t.Fatal("client paging never ended")
		}
		list, qm, err := c.Jobs().List(opts)
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range list {
			got = append(got, j.Namespace+"/"+j.ID)
		}
		if opts.NextToken = qm.NextToken; opts.NextToken == "" {
			break
		}
	}
	if want := []string{"default/worker.v2", "default/api"}; !reflect.DeepEqual(got, want) {
		t.Errorf("client list = %v, want %v", got, want)
	}

	d.wantBadParams(t, "/v1/jobs", []struct{ query, field string }{
		{"?filter=" + urlq(`Meta.team ==`), "filter"},
		{"?filter=" + urlq(`ID = "web"`), "filter"},
		{"?next_token=nodot", "next_token"},
		{"?next_token=" + urlq("bad ns.web"), "next_token"},
		{"?next_token=default.", "next_token"},
		{"?per_page=x", "per_page"},
		{"?reverse=maybe", "reverse"},
	})
}

func nodeIDs(t *testing.T) func(response) []string {
	return func(r response) []string {
		var list []api.NodeListStub
		r.decode(t, &list)
		out := []string{}
		for _, n := range list {
			out = append(out, n.ID)
		}
		return out
	}
}

// TestNodeListPagedAndFiltered: GET /v1/nodes lists by id, filters on the
// stub's JSON and pages with node ids as tokens, both ways.
func TestNodeListPagedAndFiltered(t *testing.T) {
	t.Parallel()
	d := startAgent(t)
	// Registered out of id order; n3 and n1 in dc2.
	for _, id := range []string{"n4", "n3", "n1", "n2"} {
		body := strings.ReplaceAll(nodeJSONFor(id), "\n", "")
		if id == "n3" || id == "n1" {
			body = strings.Replace(body, `"dc1"`, `"dc2"`, 1)
		}
		d.nodeWrite(t, "PUT", "/v1/client/register", body)
	}
	d.nodeWrite(t, "PUT", "/v1/client/n2/heartbeat", `{}`)
	byID := []string{"n1", "n2", "n3", "n4"}
	newest := []string{"n4", "n3", "n2", "n1"}

	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"", byID},
		{"?reverse=true", newest},
		{"?prefix=n3", []string{"n3"}},
		{"?filter=" + urlq(`Datacenter == "dc2"`), []string{"n1", "n3"}},
		{"?reverse=true&filter=" + urlq(`Datacenter == "dc1"`), []string{"n4", "n2"}},
		{"?filter=" + urlq(`Status == "ready"`), []string{"n2"}},
		{"?filter=" + urlq(`Drivers.exec.Healthy == true`), byID},
	} {
		r := d.do(t, "GET", "/v1/nodes"+tc.query, nil)
		if r.status != http.StatusOK {
			t.Fatalf("GET /v1/nodes%s: %d %s", tc.query, r.status, r.body)
		}
		if got := nodeIDs(t)(r); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("GET /v1/nodes%s = %v, want %v", tc.query, got, tc.want)
		}
	}
	for _, tc := range []struct {
		query string
		n     int
		want  []string
	}{
		{"?", 3, byID},
		{"?reverse=true", 3, newest},
		{"?reverse=true", 1, newest},
		{"?filter=" + urlq(`Datacenter == "dc1"`), 1, []string{"n2", "n4"}},
	} {
		if got := d.pageAll(t, "/v1/nodes"+tc.query, tc.n, nodeIDs(t)); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("paged /v1/nodes%s per %d = %v, want %v", tc.query, tc.n, got, tc.want)
		}
	}
	r := d.do(t, "GET", "/v1/nodes?per_page=2&reverse=true", nil)
	if tok := r.header.Get("X-Nomad-NextToken"); tok != "n2" {
		t.Errorf("next token %q, want n2", tok)
	}

	d.wantBadParams(t, "/v1/nodes", []struct{ query, field string }{
		{"?filter=" + urlq(`Datacenter ==`), "filter"},
		{"?filter=" + urlq(`Datacenter = "dc1"`), "filter"},
		{"?next_token=" + urlq("not an id"), "next_token"},
		{"?per_page=-2", "per_page"},
		{"?reverse=2", "reverse"},
	})
}
