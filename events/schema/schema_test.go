package schema_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/events/eventstest"
	"github.com/ordoplane/ordo/events/schema"
)

// compile compiles s with a draft 2020-12 validator that asserts formats;
// compiling also checks s against the draft's meta-schema.
func compile(t testing.TB, s *schema.Schema) *jsonschema.Schema {
	t.Helper()
	b, err := s.MarshalIndent()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%s: %v", s.Title, err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	url := "mem://" + strings.ReplaceAll(s.Title, " ", "-") + ".json"
	if err := c.AddResource(url, doc); err != nil {
		t.Fatalf("%s: %v", s.Title, err)
	}
	sch, err := c.Compile(url)
	if err != nil {
		t.Fatalf("%s does not compile: %v\n%s", s.Title, err, b)
	}
	return sch
}

// validate reports whether the JSON in data is valid against sch.
func validate(t testing.TB, sch *jsonschema.Schema, data []byte) error {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("instance %s: %v", data, err)
	}
	return sch.Validate(inst)
}

// streamJSON returns p's payload as it leaves the cluster: encoded as an
// event, then rendered by events.Redacted, as the event stream does.
func streamJSON(t testing.TB, p events.Payload) []byte {
	t.Helper()
	ev := eventstest.New(t, "id", p)
	m, err := events.Redacted(&ev)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestEveryTypeHasSchema is the issue's "schema generation covers every
// registered type": every version of every registered type has a schema
// that is a valid draft 2020-12 schema, names its type and versions, and
// describes the current payload.
func TestEveryTypeHasSchema(t *testing.T) {
	types := events.Types()
	if len(types) < 10 {
		t.Fatalf("only %d registered types: is the registry linked in?", len(types))
	}
	for _, typ := range types {
		current, err := schema.Lookup(typ.Name, 0)
		if err != nil {
			t.Fatalf("%s: %v", typ.Name, err)
		}
		for v := uint16(1); v <= typ.Version; v++ {
			s, err := schema.Lookup(typ.Name, v)
			if err != nil {
				t.Fatalf("%s v%d: %v", typ.Name, v, err)
			}
			compile(t, s)
			if s.Schema != schema.Draft || s.EventType != typ.Name || s.Topic != typ.Topic ||
				s.Version != v || s.PayloadVersion != typ.Version || len(s.Versions) != int(typ.Version) {
				t.Errorf("%s v%d: annotations %q %q %q v%d payload v%d versions %v", typ.Name, v,
					s.Schema, s.EventType, s.Topic, s.Version, s.PayloadVersion, s.Versions)
			}
			if !slices.Equal(s.Type, schema.Types{"object"}) || len(s.Properties) == 0 {
				t.Errorf("%s v%d: not an object with properties: %v", typ.Name, v, s.Type)
			}
			// Every version is read as the current one, so has its shape.
			a, _ := s.Properties.MarshalJSON()
			b, _ := current.Properties.MarshalJSON()
			if !bytes.Equal(a, b) {
				t.Errorf("%s v%d: properties differ from the current version's", typ.Name, v)
			}
		}
	}
}

// TestSchemasValidatePayloads encodes payloads of every type as the event
// stream does (events.New, then events.Redacted, then JSON) and validates
// them: the eventstest sample, a payload with every field set (so every
// optional field appears) and the zero payload (nil maps and slices).
func TestSchemasValidatePayloads(t *testing.T) {
	samples := eventstest.Samples()
	for _, typ := range events.Types() {
		t.Run(typ.Name, func(t *testing.T) {
			s, err := schema.Lookup(typ.Name, 0)
			if err != nil {
				t.Fatal(err)
			}
			sch := compile(t, s)
			sample, ok := samples[typ.Name]
			if !ok {
				t.Fatalf("eventstest.Samples has no %s", typ.Name)
			}
			filled, err := schema.Filled(typ)
			if err != nil {
				t.Fatal(err)
			}
			for name, p := range map[string]events.Payload{"sample": sample, "filled": filled, "zero": typ.New()} {
				data := streamJSON(t, p)
				if err := validate(t, sch, data); err != nil {
					t.Errorf("%s payload does not validate: %v\n%s", name, err, data)
				}
			}
		})
	}
}

// TestSchemasValidateFixtures validates the golden fixture of every version
// of every type (events/testdata), decoded and rendered as the stream
// renders archived events, against the schema of the version it was
// written at.
func TestSchemasValidateFixtures(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("..", "testdata", "*.msgpack"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no fixtures in events/testdata: %v", err)
	}
	seen := map[string]bool{}
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		ev, err := events.DecodeEvent(data)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		m, err := events.Redacted(ev)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		payload, _ := json.Marshal(m)
		s, err := schema.Lookup(ev.Type, ev.Version)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if err := validate(t, compile(t, s), payload); err != nil {
			t.Errorf("%s does not validate against %s: %v\n%s", path, s.Title, err, payload)
		}
		seen[fmt.Sprintf("%s v%d", ev.Type, ev.Version)] = true
	}
	if !seen["NamespaceUpserted v1"] {
		t.Error("no old-version fixture was validated")
	}
}

// TestSchemasRejectDrift proves the schemas are not vacuous: a payload with
// an unknown field, a field of the wrong type or a missing required field
// fails.
func TestSchemasRejectDrift(t *testing.T) {
	s, err := schema.Lookup("NamespaceUpserted", 0)
	if err != nil {
		t.Fatal(err)
	}
	sch := compile(t, s)
	good := `{"Namespace":{"Name":"a","Description":"","Meta":null,"VariablesQuota":0}}`
	if err := validate(t, sch, []byte(good)); err != nil {
		t.Fatalf("good payload: %v", err)
	}
	for _, bad := range []string{
		`{"Namespace":{"Name":"a","Description":"","Meta":null,"VariablesQuota":0},"Extra":1}`,
		`{"Namespace":{"Name":"a","Description":"","Meta":null,"VariablesQuota":0,"Extra":1}}`,
		`{"Namespace":{"Name":5,"Description":"","Meta":null,"VariablesQuota":0}}`,
		`{"Namespace":{"Description":"","Meta":null,"VariablesQuota":0}}`,
		`{"Namespace":{"Name":"a","Description":"","Meta":{"k":1},"VariablesQuota":0}}`,
		`{"Namespace":null}`,
		`{}`,
	} {
		if err := validate(t, sch, []byte(bad)); err == nil {
			t.Errorf("%s validates", bad)
		}
	}
}

// secretPayload is a payload with sensitive fields for the tests below; it
// is never registered.
type secretPayload struct {
	Accessor string            `json:"AccessorID"`
	Secret   string            `json:"SecretID"`
	Key      []byte            `json:"Key,omitempty"`
	Labels   map[string]string `json:"Labels"`
}

func (p *secretPayload) EntityKeys() []events.Key {
	return []events.Key{{Kind: "acl_token", Value: p.Accessor}}
}

var secretType = events.Type{Name: "SecretTested", Version: 1, Topic: "Test",
	New: func() events.Payload { return new(secretPayload) }, Sensitive: []string{"SecretID", "Key"}}

// redact renders p as events.Redacted does for secretType.
func redact(t *testing.T, p *secretPayload) []byte {
	t.Helper()
	b, _ := json.Marshal(p)
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, f := range secretType.Sensitive {
		if _, ok := m[f]; ok {
			m[f] = events.RedactedValue
		}
	}
	out, _ := json.Marshal(m)
	return out
}

// TestSensitiveFieldsMarked: a sensitive field's schema is the redacted
// constant, marked x-ordo-sensitive and listed on the payload; redacted
// payloads validate and a payload carrying a secret in clear does not, so a
// consumer validating records notices a leak. Registered types' sensitive
// fields are all marked.
func TestSensitiveFieldsMarked(t *testing.T) {
	s, err := schema.ForType(secretType, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(s.SensitiveFields, []string{"SecretID", "Key"}) {
		t.Errorf("SensitiveFields = %v", s.SensitiveFields)
	}
	for _, name := range []string{"SecretID", "Key"} {
		p := s.Properties.Get(name)
		if p == nil || !p.Sensitive || p.Const == nil || *p.Const != events.RedactedValue ||
			!strings.Contains(p.Description, events.RedactedValue) {
			t.Errorf("%s not marked sensitive: %+v", name, p)
		}
	}
	if p := s.Properties.Get("AccessorID"); p == nil || p.Sensitive {
		t.Errorf("AccessorID: %+v", p)
	}
	if !slices.Equal(s.Required, []string{"AccessorID", "SecretID", "Labels"}) {
		t.Errorf("Required = %v (Key is omitempty)", s.Required)
	}
	b, _ := s.MarshalIndent()
	if !bytes.Contains(b, []byte(`"x-ordo-sensitive": true`)) || !bytes.Contains(b, []byte(`"const": "<redacted>"`)) {
		t.Errorf("marshalled schema lacks the markers:\n%s", b)
	}
	sch := compile(t, s)
	full := &secretPayload{Accessor: "a", Secret: "top-secret", Key: []byte{1, 2}}
	for _, p := range []*secretPayload{full, {Accessor: "a"}} {
		if err := validate(t, sch, redact(t, p)); err != nil {
			t.Errorf("redacted %s: %v", redact(t, p), err)
		}
	}
	clear, _ := json.Marshal(full)
	if err := validate(t, sch, clear); err == nil {
		t.Errorf("a payload with secrets in clear validates: %s", clear)
	}

	for _, typ := range events.Types() {
		s, err := schema.Lookup(typ.Name, 0)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(s.SensitiveFields, typ.Sensitive) {
			t.Errorf("%s: SensitiveFields %v, registered %v", typ.Name, s.SensitiveFields, typ.Sensitive)
		}
		for _, f := range typ.Sensitive {
			if p := s.Properties.Get(f); p == nil || !p.Sensitive {
				t.Errorf("%s.%s not marked sensitive", typ.Name, f)
			}
		}
	}
}

// TestSensitiveNameMustExist: a Sensitive name that is not a JSON field of
// the payload (a typo, a Go name instead of the JSON one) fails generation.
func TestSensitiveNameMustExist(t *testing.T) {
	typ := secretType
	typ.Sensitive = []string{"Secret"} // the Go name; the JSON name is SecretID
	if _, err := schema.ForType(typ, 1); err == nil || !strings.Contains(err.Error(), `"Secret"`) {
		t.Fatalf("err = %v, want one naming the field", err)
	}
}

func TestUnknownTypeAndVersion(t *testing.T) {
	if _, err := schema.Lookup("NoSuchEvent", 0); !errors.Is(err, events.ErrUnknownType) ||
		!strings.Contains(err.Error(), "NoSuchEvent") {
		t.Errorf("unknown type: %v", err)
	}
	typ, _ := events.Lookup("NamespaceUpserted")
	if _, err := schema.Lookup(typ.Name, typ.Version+1); !errors.Is(err, schema.ErrUnknownVersion) {
		t.Errorf("future version: %v", err)
	}
	if _, err := schema.ForType(typ, 0); !errors.Is(err, schema.ErrUnknownVersion) {
		t.Errorf("version 0: %v", err)
	}
}

// TestOldVersionSchema: NamespaceUpserted v1 was flat; its schema describes
// the current (v3) shape it is upcast to, and says so.
func TestOldVersionSchema(t *testing.T) {
	s, err := schema.Lookup("NamespaceUpserted", 1)
	if err != nil {
		t.Fatal(err)
	}
	if s.Title != "NamespaceUpserted v1" || s.Version != 1 || s.PayloadVersion != 3 ||
		!strings.Contains(s.Description, "upcast to version 3") || s.Properties.Get("Namespace") == nil {
		t.Errorf("v1 schema: %q %q v%d payload v%d", s.Title, s.Description, s.Version, s.PayloadVersion)
	}
}

// TestKeyKinds: the key kinds listed for a type include every kind its
// sample's keys have.
func TestKeyKinds(t *testing.T) {
	for name, p := range eventstest.Samples() {
		typ, _ := events.Lookup(name)
		kinds, err := schema.KeyKinds(typ)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range p.EntityKeys() {
			if !slices.Contains(kinds, k.Kind) {
				t.Errorf("%s: kinds %v lack %q", name, kinds, k.Kind)
			}
		}
	}
}

// TestEnvelope: the record schema validates a record built from a fixture
// the way the event stream builds one and one shaped as the Kafka mirror
// writes it, requires what both always write, and rejects a record
// without its payload.
func TestEnvelope(t *testing.T) {
	env := schema.Envelope()
	sch := compile(t, env)
	if got, want := env.Required, []string{"Topic", "Type", "Key", "Index",
		"Payload", "Seq", "Version", "ID", "Time"}; !slices.Equal(got, want) {
		t.Errorf("Required = %v, want %v", got, want)
	}
	for _, p := range env.Properties {
		if p.Schema.Description == "" {
			t.Errorf("%s has no description", p.Name)
		}
	}
	data, err := os.ReadFile(filepath.Join("..", "testdata", "AllocsPlaced.v1.msgpack"))
	if err != nil {
		t.Fatal(err)
	}
	ev, err := events.DecodeEvent(data)
	if err != nil {
		t.Fatal(err)
	}
	payload, err := events.Redacted(ev)
	if err != nil {
		t.Fatal(err)
	}
	typ, _ := events.Lookup(ev.Type)
	rec := schema.Record{Topic: typ.Topic, Type: ev.Type, Key: ev.Keys[0].Value, Namespace: ev.Key(events.KindNamespace),
		Index: ev.Index, Payload: payload, Seq: ev.Seq, Version: ev.Version, ID: ev.ID,
		Actor: ev.Actor, CorrelationID: ev.CorrelationID, Keys: ev.Keys}
	for _, k := range ev.Keys[1:] {
		rec.FilterKeys = append(rec.FilterKeys, k.Value)
	}
	b, _ := json.Marshal(rec)
	if err := validate(t, sch, b); err != nil {
		t.Fatalf("record: %v\n%s", err, b)
	}
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	mirror := maps.Clone(m) // the mirror's record: no Namespace or FilterKeys
	delete(mirror, "Namespace")
	delete(mirror, "FilterKeys")
	mb, _ := json.Marshal(mirror)
	if err := validate(t, sch, mb); err != nil {
		t.Errorf("mirror-shaped record: %v\n%s", err, mb)
	}
	delete(m, "Payload")
	b, _ = json.Marshal(m)
	if err := validate(t, sch, b); err == nil {
		t.Error("a record without Payload validates")
	}
	if got := slices.Sorted(maps.Keys(env.Defs)); !slices.Equal(got, []string{"Key"}) {
		t.Errorf("envelope $defs %v", got)
	}
}

// TestMarshalKeepsDeclarationOrder: properties marshal in Go declaration
// order and "<redacted>" is not HTML-escaped.
func TestMarshalKeepsDeclarationOrder(t *testing.T) {
	s, err := schema.ForType(secretType, 1)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := s.MarshalIndent()
	text := string(b)
	last := -1
	for _, name := range []string{`"AccessorID"`, `"SecretID"`, `"Key"`, `"Labels"`} {
		i := strings.Index(text, name)
		if i <= last {
			t.Fatalf("%s out of order in\n%s", name, text)
		}
		last = i
	}
	if strings.Contains(text, `\u003c`) {
		t.Error("HTML-escaped output")
	}
	var back map[string]any
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(slices.Sorted(maps.Keys(back["properties"].(map[string]any))),
		[]string{"AccessorID", "Key", "Labels", "SecretID"}) {
		t.Errorf("properties %v", back["properties"])
	}
}
