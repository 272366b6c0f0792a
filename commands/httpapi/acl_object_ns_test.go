package httpapi_test

import (
	"encoding/json"
	"net/http"
	"testing"
)

// TestReadByIDChecksTheObjectsNamespace: an evaluation read by id is
// authorized against its own namespace, not the ?namespace the caller
// names: a token that may read jobs in default only cannot read a prod
// eval by asking with namespace=default.
func TestReadByIDChecksTheObjectsNamespace(t *testing.T) {
	g := startACLAgent(t)
	var boot tokenOut
	g.call(t, "PUT", "/v1/acl/bootstrap", "", nil, &boot)
	mgmt := boot.SecretID
	if st := g.call(t, "PUT", "/v1/namespace/prod", mgmt, map[string]string{"Name": "prod"}); st != http.StatusOK {
		t.Fatalf("namespace prod: %d", st)
	}
	var job map[string]any
	if err := json.Unmarshal([]byte(jobJSON("web", 1)), &job); err != nil {
		t.Fatal(err)
	}
	job["Job"].(map[string]any)["Namespace"] = "prod"
	var reg registerResponse
	g.call(t, "PUT", "/v1/jobs?namespace=prod", mgmt, job, &reg)
	if reg.EvalID == "" {
		t.Fatal("no eval")
	}
	g.policy(t, mgmt, "read-default", `namespace "default" { policy = "read" }`)
	g.policy(t, mgmt, "read-prod", `namespace "prod" { policy = "read" }`)
	def := g.token(t, mgmt, "default-reader", "read-default")
	prod := g.token(t, mgmt, "prod-reader", "read-prod")

	for _, tc := range []struct {
		who, token, ns string
		want           int
	}{
		{"default reader naming default", def.SecretID, "default", http.StatusForbidden},
		{"default reader naming prod", def.SecretID, "prod", http.StatusForbidden},
		{"prod reader naming prod", prod.SecretID, "prod", http.StatusOK},
		{"management", mgmt, "default", http.StatusOK},
	} {
		for _, path := range []string{"/v1/evaluation/" + reg.EvalID, "/v1/evaluation/" + reg.EvalID + "/allocations"} {
			if got := g.call(t, "GET", path+"?namespace="+tc.ns, tc.token, nil); got != tc.want && !(tc.want == http.StatusOK && got == http.StatusOK) {
				t.Errorf("%s: GET %s = %d, want %d", tc.who, path, got, tc.want)
			}
		}
	}
}
