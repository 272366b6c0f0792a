package main

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/events/schema"
)

// TestEventsSchemaList: without a type, every registered type is listed
// with its current version, topic and whether it has sensitive fields.
func TestEventsSchemaList(t *testing.T) {
	code, out, errOut := runCLI("events", "schema")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if got := strings.Fields(lines[0]); strings.Join(got, " ") != "Type Version Versions Topic Keys Sensitive" {
		t.Errorf("header %q", lines[0])
	}
	types := events.Types()
	if len(lines) != len(types)+1 {
		t.Fatalf("%d lines for %d types:\n%s", len(lines), len(types), out)
	}
	for i, typ := range types {
		f := strings.Fields(lines[i+1])
		if f[0] != typ.Name || f[1] != strconv.Itoa(int(typ.Version)) || f[3] != typ.Topic || (f[5] == "no") != (len(typ.Sensitive) == 0) {
			t.Errorf("line %q for %s v%d", lines[i+1], typ.Name, typ.Version)
		}
	}
	if !strings.Contains(strings.Join(strings.Fields(out), " "), "NamespaceUpserted 3 1,2,3 Namespace namespace no") {
		t.Errorf("NamespaceUpserted's versions not listed:\n%s", out)
	}

	code, out, errOut = runCLI("events", "schema", "-json")
	var entries []schema.Entry
	if code != 0 || json.Unmarshal([]byte(out), &entries) != nil || len(entries) != len(types) {
		t.Fatalf("-json: exit %d, %d entries: %s%s", code, len(entries), out, errOut)
	}
}

// TestEventsSchemaOne prints one type's schema, at the current version
// and at an older one, and the record schema.
func TestEventsSchemaOne(t *testing.T) {
	code, out, errOut := runCLI("events", "schema", "NamespaceUpserted")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var s map[string]any
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	if s["$schema"] != schema.Draft || s["title"] != "NamespaceUpserted v3" || s["x-ordo-version"] != 3.0 {
		t.Errorf("schema: %v %v %v", s["$schema"], s["title"], s["x-ordo-version"])
	}
	want, _ := schema.Lookup("NamespaceUpserted", 0)
	wantJSON, _ := want.MarshalIndent()
	if out != string(wantJSON) {
		t.Errorf("printed\n%s\nwant\n%s", out, wantJSON)
	}

	code, out, errOut = runCLI("events", "schema", "-version", "1", "NamespaceUpserted")
	if code != 0 || !strings.Contains(out, `"title": "NamespaceUpserted v1"`) || !strings.Contains(out, `"x-ordo-payload-version": 3`) {
		t.Errorf("-version 1: exit %d\n%s%s", code, out, errOut)
	}

	code, out, errOut = runCLI("events", "schema", "-envelope")
	if code != 0 || !strings.Contains(out, `"title": "ordo event record"`) {
		t.Errorf("-envelope: exit %d\n%s%s", code, out, errOut)
	}
}

// TestEventsSchemaErrors: an unknown type, a version the type never had
// and -version without a type fail with a message naming the problem.
func TestEventsSchemaErrors(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"events", "schema", "NoSuchEvent"}, `unknown event type "NoSuchEvent"`},
		{[]string{"events", "schema", "-version", "4", "NamespaceUpserted"}, "NamespaceUpserted v4 (versions 1 to 3)"},
		{[]string{"events", "schema", "-version", "2"}, "-version needs an event type"},
		{[]string{"events", "schema", "A", "B"}, "accepts at most 1 arg"},
	} {
		code, out, errOut := runCLI(tt.args...)
		if code == 0 || out != "" || !strings.Contains(errOut, tt.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want nonzero and %q", tt.args, code, out, errOut, tt.want)
		}
	}
}
