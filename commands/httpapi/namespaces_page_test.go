package httpapi_test

import (
	"testing"

	"github.com/ordoplane/ordo/projections/namespaces"
)

// TestNamespacesPage: /v1/namespaces pages by name like the other lists:
// per_page with X-Nomad-NextToken, next_token resuming there, reverse,
// prefix and filter.
func TestNamespacesPage(t *testing.T) {
	t.Parallel()
	d := startAgent(t)
	for _, n := range []string{"a1", "a2", "a3", "b1"} {
		d.putNamespace(t, n, "")
	}
	names := func(path string) ([]string, string) {
		t.Helper()
		r := d.do(t, "GET", path, nil)
		if r.status != 200 {
			t.Fatalf("%s: %d %s", path, r.status, r.body)
		}
		var list []namespaces.Namespace
		r.decode(t, &list)
		var out []string
		for _, ns := range list {
			out = append(out, ns.Name)
		}
		return out, r.header.Get("X-Nomad-NextToken")
	}
	for _, tc := range []struct {
		path, next string
		want       []string
	}{
		{"/v1/namespaces", "", []string{"a1", "a2", "a3", "b1", "default"}},
		{"/v1/namespaces?per_page=2", "a3", []string{"a1", "a2"}},
		{"/v1/namespaces?per_page=2&next_token=a3", "default", []string{"a3", "b1"}},
		{"/v1/namespaces?per_page=2&next_token=default", "", []string{"default"}},
		{"/v1/namespaces?per_page=2&reverse=true", "a3", []string{"default", "b1"}},
		{"/v1/namespaces?per_page=2&reverse=true&next_token=a3", "a1", []string{"a3", "a2"}},
		{"/v1/namespaces?prefix=a&per_page=2", "a3", []string{"a1", "a2"}},
		{"/v1/namespaces?filter=Name+matches+%22.1%22", "", []string{"a1", "b1"}},
	} {
		got, next := names(tc.path)
		if next != tc.next || len(got) != len(tc.want) {
			t.Fatalf("%s: %v next %q, want %v next %q", tc.path, got, next, tc.want, tc.next)
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Fatalf("%s: %v, want %v", tc.path, got, tc.want)
			}
		}
	}
}
