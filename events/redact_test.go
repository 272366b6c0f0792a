package events_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/events/eventstest"
)

// testSecret is a throwaway type with a sensitive field, registered only
// by TestRedacted.
type testSecret struct {
	Accessor string `msgpack:"acc" json:"AccessorID"`
	Secret   string `msgpack:"sec" json:"SecretID"`
	Empty    string `msgpack:"emp,omitempty" json:"Empty,omitempty"`
}

func (p *testSecret) EntityKeys() []events.Key {
	return []events.Key{{Kind: "acl_token", Value: p.Accessor}}
}

func TestRedacted(t *testing.T) {
	const name = "TestSecretCreated"
	events.Register(events.Type{Name: name, Version: 1, Topic: "Test",
		New:       func() events.Payload { return new(testSecret) },
		Sensitive: []string{"SecretID", "Empty"}})
	t.Cleanup(func() { events.Unregister(name) })

	const secret = "9b1c1d2e-top-secret"
	ev := eventstest.New(t, "id", &testSecret{Accessor: "acc-1", Secret: secret})
	payload := append([]byte(nil), ev.Payload...)

	m, err := events.Redacted(&ev)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"AccessorID": "acc-1", "SecretID": events.RedactedValue}
	if !reflect.DeepEqual(m, want) {
		t.Fatalf("Redacted = %v, want %v (an absent sensitive field stays absent)", m, want)
	}
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), secret) {
		t.Fatalf("redacted JSON carries the secret: %s", out)
	}
	// Redaction works on a copy: the archived event keeps its payload.
	if string(ev.Payload) != string(payload) {
		t.Fatal("Redacted modified the event's payload")
	}
	p, err := events.Decode(&ev)
	if err != nil || p.(*testSecret).Secret != secret {
		t.Fatalf("Decode after Redacted: %+v, %v", p, err)
	}
}

func TestRedactedWithoutSensitiveFields(t *testing.T) {
	for name, p := range eventstest.Samples() {
		ev := eventstest.New(t, "id", p)
		m, err := events.Redacted(&ev)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		// With nothing sensitive, Redacted is the payload's JSON.
		b, _ := json.Marshal(p)
		var want map[string]any
		if err := json.Unmarshal(b, &want); err != nil {
			t.Fatal(err)
		}
		typ, _ := events.Lookup(name)
		for _, f := range typ.Sensitive {
			if _, ok := want[f]; ok {
				want[f] = events.RedactedValue
			}
		}
		if !reflect.DeepEqual(m, want) {
			t.Errorf("%s: Redacted = %v, want %v", name, m, want)
		}
	}
}
