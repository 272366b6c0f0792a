package httpapi_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/events/schema"
)

// compileSchema compiles the JSON Schema in doc (draft 2020-12).
func compileSchema(t *testing.T, doc []byte) *jsonschema.Schema {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource("mem://schema.json", v); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("mem://schema.json")
	if err != nil {
		t.Fatalf("schema does not compile: %v\n%s", err, doc)
	}
	return sch
}

func validJSON(t *testing.T, sch *jsonschema.Schema, doc []byte) error {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	return sch.Validate(v)
}

// TestEventStreamMatchesSchemas reads events off /v1/operator/log/stream as a
// consumer does and validates each record against the record schema and
// its payload against its type's schema, both as the API serves them
// (GET /v1/events/schema/...): the schemas describe what really leaves.
func TestEventStreamMatchesSchemas(t *testing.T) {
	t.Parallel()
	d := startAgent(t)
	last := d.putNamespace(t, "payments", "schema check")

	get := func(path string, wantStatus int) []byte {
		t.Helper()
		resp, err := http.Get(d.base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != wantStatus {
			t.Fatalf("GET %s: %d %s, want %d", path, resp.StatusCode, b, wantStatus)
		}
		return b
	}
	record := compileSchema(t, get("/v1/events/schema/_record", http.StatusOK))
	payloads := map[string]*jsonschema.Schema{}

	s := openStream(t, d.base+"/v1/operator/log/stream?index=1")
	seen := map[string]int{}
	for prev := uint64(0); prev < last; {
		line := s.next(t)
		if line == "{}" {
			continue
		}
		var f struct {
			Index  uint64
			Events []json.RawMessage
		}
		if err := json.Unmarshal([]byte(line), &f); err != nil {
			t.Fatalf("frame %q: %v", line, err)
		}
		prev = f.Index
		for _, raw := range f.Events {
			if err := validJSON(t, record, raw); err != nil {
				t.Fatalf("record does not match the record schema: %v\n%s", err, raw)
			}
			var e struct {
				Type    string
				Payload json.RawMessage
			}
			_ = json.Unmarshal(raw, &e)
			sch, ok := payloads[e.Type]
			if !ok {
				sch = compileSchema(t, get("/v1/events/schema/"+e.Type, http.StatusOK))
				payloads[e.Type] = sch
			}
			if err := validJSON(t, sch, e.Payload); err != nil {
				t.Fatalf("%s payload does not match its schema: %v\n%s", e.Type, err, e.Payload)
			}
			seen[e.Type]++
		}
	}
	if seen["NamespaceUpserted"] == 0 || seen["ServerRegistered"] == 0 {
		t.Fatalf("validated %v", seen)
	}

	// The list names every registered type; versions and unknown types.
	var list []schema.Entry
	if err := json.Unmarshal(get("/v1/events/schema", http.StatusOK), &list); err != nil || len(list) != len(events.Types()) {
		t.Fatalf("list: %v, %d entries", err, len(list))
	}
	if b := get("/v1/events/schema/NamespaceUpserted?version=1", http.StatusOK); !bytes.Contains(b, []byte(`"x-ordo-version":1`)) {
		t.Errorf("version 1: %s", b)
	}
	if b := get("/v1/events/schema/NoSuchEvent", http.StatusNotFound); !strings.Contains(string(b), "NoSuchEvent") {
		t.Errorf("unknown type: %s", b)
	}
	nsType, _ := events.Lookup("NamespaceUpserted")
	for _, v := range []string{"0", fmt.Sprint(nsType.Version + 1), "x"} { // 0, one past the current, not a number
		if b := get("/v1/events/schema/NamespaceUpserted?version="+v, http.StatusBadRequest); !strings.Contains(string(b), `"Field":"version"`) {
			t.Errorf("version=%s: %s", v, b)
		}
	}
}
