package httpapi_test

import (
	"net/http"
	"reflect"
	"strings"
	"testing"
)

// TestNamespaceAndKeyListsFilter: the lists that are not paged take
// Nomad's filter too (GET /v1/namespaces, GET /v1/operator/keyring/keys),
// evaluated on the items' JSON; a bad expression is a 400 naming filter.
func TestNamespaceAndKeyListsFilter(t *testing.T) {
	t.Parallel()
	d := startAgent(t)
	for _, body := range []string{`{"Name":"web","Description":"front"}`, `{"Name":"billing","Description":"back"}`} {
		if r := d.do(t, "POST", "/v1/namespace", strings.NewReader(body)); r.status != http.StatusOK {
			t.Fatalf("POST /v1/namespace: %d %s", r.status, r.body)
		}
	}
	names := func(query string) []string {
		t.Helper()
		r := d.do(t, "GET", "/v1/namespaces"+query, nil)
		if r.status != http.StatusOK {
			t.Fatalf("GET /v1/namespaces%s: %d %s", query, r.status, r.body)
		}
		var list []struct{ Name string }
		r.decode(t, &list)
		out := []string{}
		for _, n := range list {
			out = append(out, n.Name)
		}
		return out
	}
	if got := names("?filter=" + urlq(`Description == "back"`)); !reflect.DeepEqual(got, []string{"billing"}) {
		t.Fatalf("filtered namespaces = %v, want [billing]", got)
	}
	if got := names("?filter=" + urlq(`Name == "nope"`)); len(got) != 0 {
		t.Fatalf("namespaces matching nothing = %v, want []", got)
	}
	d.wantBadParams(t, "/v1/namespaces", []struct{ query, field string }{{"?filter=" + urlq(`Name ==`), "filter"}})
	d.wantBadParams(t, "/v1/operator/keyring/keys", []struct{ query, field string }{{"?filter=" + urlq(`KeyID ===`), "filter"}})
}
