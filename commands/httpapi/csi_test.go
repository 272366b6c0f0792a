package httpapi_test

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/ordoplane/ordo/commands/csi/csitest"
	"github.com/ordoplane/ordo/events"
)

func volumeBody(id, ns string) string {
	v := csitest.Volume(id, events.CSIAccessSingleNodeWriter)
	v.Volume.Namespace = ns
	b, _ := json.Marshal(map[string]any{"Volumes": []any{map[string]any{
		"ID": id, "Namespace": ns, "PluginID": "hostpath", "Type": "csi",
		"RequestedCapabilities": v.Volume.RequestedCapabilities, "Secrets": v.Secrets, "Parameters": v.Volume.Parameters}}})
	return string(b)
}

// TestCSIVolumeAPI: Nomad's volume and plugin endpoints — register over
// PUT, secrets redacted on read, lists with namespace * and prefix
// together (N19), get and deregister by exact id (N19), plugin lists by
// prefix, bad input as a 400 naming the field with nothing appended.
func TestCSIVolumeAPI(t *testing.T) {
	d := startAgent(t)
	d.putNamespace(t, "prod", "")
	reg, _ := json.Marshal(csitest.PluginNode("n1", "p1", nil).Node)
	if r := d.do(t, "PUT", "/v1/client/register", strings.NewReader(string(reg))); r.status != 200 {
		t.Fatalf("register node: %d %s", r.status, r.body)
	}
	for _, v := range [][2]string{{"db", "default"}, {"db-2", "default"}, {"web", "default"}, {"db-prod", "prod"}} {
		if r := d.do(t, "PUT", "/v1/volume/csi/"+v[0]+"?namespace="+v[1], strings.NewReader(volumeBody(v[0], v[1]))); r.status != 200 {
			t.Fatalf("register %s: %d %s", v[0], r.status, r.body)
		}
	}
	r := d.do(t, "GET", "/v1/volume/csi/db", nil)
	var vol struct {
		ID, PluginID string
		Secrets      map[string]string
		Schedulable  bool
		NodesHealthy int
	}
	r.decode(t, &vol)
	if r.status != 200 || vol.ID != "db" || vol.Secrets["token"] != "[REDACTED]" || !vol.Schedulable || vol.NodesHealthy != 1 {
		t.Fatalf("get db: %d %s", r.status, r.body)
	}
	if strings.Contains(string(r.body), "t1") {
		t.Fatalf("secret value in the response: %s", r.body)
	}
	if r := d.do(t, "GET", "/v1/volume/csi/d", nil); r.status != 404 {
		t.Fatalf("get by prefix: %d %s", r.status, r.body)
	}

	ids := func(path string) []string {
		t.Helper()
		r := d.do(t, "GET", path, nil)
		if r.status != 200 {
			t.Fatalf("%s: %d %s", path, r.status, r.body)
		}
		var list []struct{ ID, Namespace string }
		r.decode(t, &list)
		var out []string
		for _, v := range list {
			out = append(out, v.Namespace+"/"+v.ID)
		}
		return out
	}
	for path, want := range map[string][]string{
		"/v1/volumes?type=csi&namespace=*&prefix=db": {"default/db", "default/db-2", "prod/db-prod"},
		"/v1/volumes?type=csi&prefix=db":             {"default/db", "default/db-2"},
		"/v1/volumes?namespace=prod":                 {"prod/db-prod"},
		"/v1/volumes?namespace=*&prefix=w":           {"default/web"},
	} {
		if got := ids(path); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %v, want %v", path, got, want)
		}
	}
	if got := ids("/v1/plugins?type=csi&prefix=host"); !reflect.DeepEqual(got, []string{"/hostpath"}) {
		t.Errorf("plugins by prefix: %v", got)
	}
	if got := ids("/v1/plugins?prefix=x"); len(got) != 0 {
		t.Errorf("plugins by prefix x: %v", got)
	}
	r = d.do(t, "GET", "/v1/plugin/csi/hostpath", nil)
	var plug struct {
		ID                          string
		NodesHealthy, NodesExpected int
		Allocations                 []any
	}
	r.decode(t, &plug)
	if r.status != 200 || plug.ID != "hostpath" || plug.NodesHealthy != 1 || plug.Allocations == nil {
		t.Fatalf("plugin: %d %s", r.status, r.body)
	}

	// Deregister names the exact id: db goes, db-2 stays.
	if r := d.do(t, "DELETE", "/v1/volume/csi/d", nil); r.status != 404 {
		t.Fatalf("deregister by prefix: %d %s", r.status, r.body)
	}
	if r := d.do(t, "DELETE", "/v1/volume/csi/db", nil); r.status != 200 {
		t.Fatalf("deregister db: %d %s", r.status, r.body)
	}
	if got := ids("/v1/volumes?prefix=db"); !reflect.DeepEqual(got, []string{"default/db-2"}) {
		t.Fatalf("after deregistering db: %v", got)
	}

	before := d.Agent.FSM().Applied()
	for _, tc := range []struct{ method, path, body, field string }{
		{"PUT", "/v1/volume/csi/x", `{"Volumes":[{"ID":"x","PluginID":"hostpath","RequestedCapabilities":[{"AccessMode":"sometimes","AttachmentMode":"file-system"}]}]}`, "RequestedCapabilities.AccessMode"},
		{"PUT", "/v1/volume/csi/x", `{"Volumes":[{"ID":"y","PluginID":"hostpath"}]}`, "ID"},
		{"PUT", "/v1/volume/csi/x", `{"Volumes":[{"ID":"x","PluginID":"nope","RequestedCapabilities":[{"AccessMode":"single-node-writer","AttachmentMode":"file-system"}]}]}`, "PluginID"},
		{"PUT", "/v1/volume/csi/x", `[1,2]`, "body"},
		{"GET", "/v1/volumes?type=host", "", "type"},
		{"GET", "/v1/volume/csi/a%20b", "", "id"},
	} {
		r := d.do(t, tc.method, tc.path, strings.NewReader(tc.body))
		if r.status != http.StatusBadRequest {
			t.Errorf("%s %s %s: %d %s, want 400", tc.method, tc.path, tc.body, r.status, r.body)
			continue
		}
		if e := r.apiError(t); e.Field != tc.field {
			t.Errorf("%s %s: field %q (%s), want %q", tc.method, tc.path, e.Field, e.Error, tc.field)
		}
	}
	if after := d.Agent.FSM().Applied(); after != before {
		t.Errorf("bad requests appended: applied %d → %d", before, after)
	}
}
