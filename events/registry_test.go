package events_test

import (
	"errors"
	"reflect"
	"slices"
	"sort"
	"testing"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/events/eventstest"
)

func TestSamplesCoverRegistry(t *testing.T) {
	samples := eventstest.Samples()
	for _, typ := range events.Types() {
		p, ok := samples[typ.Name]
		if !ok {
			t.Errorf("type %s has no sample in eventstest.Samples", typ.Name)
			continue
		}
		if got, want := reflect.TypeOf(p), reflect.TypeOf(typ.New()); got != want {
			t.Errorf("sample of %s is %v, New returns %v", typ.Name, got, want)
		}
		if hasZeroField(reflect.ValueOf(p).Elem()) {
			t.Errorf("sample of %s leaves a field zero: %+v", typ.Name, p)
		}
	}
	for name := range samples {
		if _, ok := events.Lookup(name); !ok {
			t.Errorf("sample %s names no registered type", name)
		}
	}
}

// hasZeroField reports whether any exported field of struct v, recursively,
// holds its zero value.
func hasZeroField(v reflect.Value) bool {
	for i := range v.NumField() {
		f := v.Field(i)
		if !v.Type().Field(i).IsExported() {
			continue
		}
		if f.IsZero() {
			return true
		}
		if f.Kind() == reflect.Struct && hasZeroField(f) {
			return true
		}
	}
	return false
}

func TestNewDecodeEveryType(t *testing.T) {
	for name, p := range eventstest.Samples() {
		t.Run(name, func(t *testing.T) {
			typ, _ := events.Lookup(name)
			ev, err := events.New("id-1", p)
			if err != nil {
				t.Fatal(err)
			}
			if ev.Type != name || ev.Version != typ.Version || ev.ID != "id-1" {
				t.Fatalf("New set type %s v%d id %q, want %s v%d id-1", ev.Type, ev.Version, ev.ID, name, typ.Version)
			}
			if !reflect.DeepEqual(ev.Keys, p.EntityKeys()) || len(ev.Keys) == 0 {
				t.Fatalf("Keys %v, want the payload's entity keys %v", ev.Keys, p.EntityKeys())
			}
			// Through the codec, as the archive stores it.
			data := eventstest.EncodeEvent(t, &ev)
			back, err := events.DecodeEvent(data)
			if err != nil {
				t.Fatal(err)
			}
			got, err := events.Decode(back)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, p) {
				t.Fatalf("decoded %+v, want %+v", got, p)
			}
		})
	}
}

func TestNewUnknownPayload(t *testing.T) {
	_, err := events.New("x", unregistered{})
	if !errors.Is(err, events.ErrUnknownType) {
		t.Fatalf("New(unregistered) = %v, want ErrUnknownType", err)
	}
	// A pointer to a registered payload is required; the value type is
	// another Go type and must not be confused with it.
	_, err = events.New("x", valueDeleted{})
	if !errors.Is(err, events.ErrUnknownType) {
		t.Fatalf("New(value type) = %v, want ErrUnknownType", err)
	}
}

type unregistered struct{}

func (unregistered) EntityKeys() []events.Key { return nil }

type valueDeleted events.NamespaceDeleted

func (valueDeleted) EntityKeys() []events.Key { return nil }

func TestDecodeUnknownType(t *testing.T) {
	_, err := events.Decode(&events.Event{Type: "NoSuchEvent", Version: 1, Payload: msgpack.RawMessage{0x80}})
	if !errors.Is(err, events.ErrUnknownType) {
		t.Fatalf("Decode = %v, want ErrUnknownType", err)
	}
	_, err = events.Redacted(&events.Event{Type: "NoSuchEvent", Version: 1, Payload: msgpack.RawMessage{0x80}})
	if !errors.Is(err, events.ErrUnknownType) {
		t.Fatalf("Redacted = %v, want ErrUnknownType", err)
	}
}

func TestDecodeFutureVersion(t *testing.T) {
	for _, typ := range events.Types() {
		ev := eventstest.New(t, "id", eventstest.Samples()[typ.Name])
		ev.Version = typ.Version + 1
		if _, err := events.Decode(&ev); !errors.Is(err, events.ErrFutureVersion) {
			t.Errorf("%s v%d: Decode = %v, want ErrFutureVersion", typ.Name, ev.Version, err)
		}
	}
}

func TestDecodeBadPayload(t *testing.T) {
	ev := events.Event{Type: "NamespaceDeleted", Version: 1, Payload: msgpack.RawMessage{0x92, 0x01}}
	if _, err := events.Decode(&ev); err == nil {
		t.Fatal("decoded a truncated payload")
	}
	// An old version whose payload is corrupt fails in its upcaster.
	ev = events.Event{Type: "NamespaceUpserted", Version: 1, Payload: msgpack.RawMessage{0xa1}}
	if _, err := events.Decode(&ev); err == nil {
		t.Fatal("upcast a truncated v1 payload")
	}
}

// payloadV3 is the current shape of a throwaway type whose v1 has no upcaster.
type payloadV3 struct {
	Name string `msgpack:"n"`
}

func (*payloadV3) EntityKeys() []events.Key { return nil }

func TestDecodeMissingUpcaster(t *testing.T) {
	const name = "TestMissingUpcaster"
	events.Register(events.Type{Name: name, Version: 3, Topic: "Test", New: func() events.Payload { return new(payloadV3) }})
	t.Cleanup(func() { events.Unregister(name) })
	events.RegisterUpcaster(events.Upcaster{Name: name, From: 2, Up: func(old msgpack.RawMessage) (msgpack.RawMessage, error) {
		return msgpack.Marshal(&payloadV3{Name: "up from 2"})
	}})

	v2 := events.Event{Type: name, Version: 2, Payload: msgpack.RawMessage{0x80}}
	p, err := events.Decode(&v2)
	if err != nil || p.(*payloadV3).Name != "up from 2" {
		t.Fatalf("v2: %v, %v", p, err)
	}
	v1 := events.Event{Type: name, Version: 1, Payload: msgpack.RawMessage{0x80}}
	if _, err := events.Decode(&v1); err == nil {
		t.Fatal("v1 decoded without an upcaster from 1")
	}
	v0 := events.Event{Type: name, Version: 0, Payload: msgpack.RawMessage{0x80}}
	if _, err := events.Decode(&v0); err == nil {
		t.Fatal("v0 decoded without an upcaster from 0")
	}
}

func TestRegisterPanics(t *testing.T) {
	newP := func() events.Payload { return new(payloadV3) }
	for name, typ := range map[string]events.Type{
		"duplicate":  {Name: "NamespaceDeleted", Version: 1, Topic: "Namespace", New: newP},
		"no name":    {Version: 1, Topic: "T", New: newP},
		"no version": {Name: "TestNoVersion", Topic: "T", New: newP},
		"no topic":   {Name: "TestNoTopic", Version: 1, New: newP},
		"no New":     {Name: "TestNoNew", Version: 1, Topic: "T"},
		// New finds the type by the payload's Go type, which must be unique.
		"duplicate payload": {Name: "TestDupPayload", Version: 1, Topic: "T",
			New: func() events.Payload { return new(events.NamespaceDeleted) }},
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Errorf("Register(%+v) did not panic", typ)
				}
				if typ.Name != "NamespaceDeleted" && typ.Name != "TestDupPayload" {
					events.Unregister(typ.Name)
				}
			}()
			events.Register(typ)
		})
	}
	// A rejected registration leaves the registry as it was.
	if ev, err := events.New("x", &events.NamespaceDeleted{Name: "n"}); err != nil || ev.Type != "NamespaceDeleted" {
		t.Errorf("New(*NamespaceDeleted) = %s, %v after rejected registrations", ev.Type, err)
	}
	if _, ok := events.Lookup("TestDupPayload"); ok {
		t.Error("a rejected registration was kept")
	}
	t.Run("duplicate upcaster", func(t *testing.T) {
		defer func() {
			if recover() == nil {
				t.Error("RegisterUpcaster of a duplicate did not panic")
			}
		}()
		events.RegisterUpcaster(events.Upcaster{Name: "NamespaceUpserted", From: 1})
	})
}

func TestTypesSortedAndLookup(t *testing.T) {
	ts := events.Types()
	names := make([]string, len(ts))
	for i, typ := range ts {
		names[i] = typ.Name
		got, ok := events.Lookup(typ.Name)
		if !ok || got.Name != typ.Name || got.Version != typ.Version || got.Topic != typ.Topic {
			t.Errorf("Lookup(%s) = %+v, %v", typ.Name, got, ok)
		}
	}
	if !sort.StringsAreSorted(names) {
		t.Errorf("Types not sorted: %v", names)
	}
	for _, want := range []string{"NamespaceDeleted", "NamespaceUpserted", "ServerRegistered", "ServerRemoved"} {
		if !slices.Contains(names, want) {
			t.Errorf("%s not registered (have %v)", want, names)
		}
	}
	if _, ok := events.Lookup("NoSuchEvent"); ok {
		t.Error("Lookup of an unknown type succeeded")
	}
}

// TestPredecodeShares: after Predecode, every Decode of the event returns
// the one payload it decoded; without it, each Decode is a new value.
func TestPredecodeShares(t *testing.T) {
	ev, err := events.New("e1", &events.NamespaceUpserted{Namespace: events.Namespace{Name: "a"}})
	if err != nil {
		t.Fatal(err)
	}
	p1, _ := events.Decode(&ev)
	p2, _ := events.Decode(&ev)
	if p1 == p2 {
		t.Fatal("two decodes without Predecode share a payload")
	}
	events.Predecode(&ev)
	p3, _ := events.Decode(&ev)
	p4, _ := events.Decode(&ev)
	if p3 != p4 || p3.(*events.NamespaceUpserted).Namespace.Name != "a" {
		t.Fatalf("decodes after Predecode: %p %p", p3, p4)
	}
	bad := events.Event{Type: "NoSuchType"}
	events.Predecode(&bad)
	if _, err := events.Decode(&bad); err == nil {
		t.Fatal("an undecodable payload decoded after Predecode")
	}
}

// DecodeIf decodes an event of one of the types it names, and passes over
// any other, even one whose payload would not decode.
func TestDecodeIf(t *testing.T) {
	ev := eventstest.New(t, "id", eventstest.Samples()["NamespaceDeleted"])
	p, err := events.DecodeIf(&ev, "NamespaceUpserted", "NamespaceDeleted")
	if err != nil || !reflect.DeepEqual(p, eventstest.Samples()["NamespaceDeleted"]) {
		t.Fatalf("DecodeIf(named type) = %+v, %v", p, err)
	}
	bad := events.Event{Type: "NamespaceDeleted", Version: 1, Payload: msgpack.RawMessage{0x92, 0x01}}
	if p, err := events.DecodeIf(&bad, "NamespaceUpserted"); p != nil || err != nil {
		t.Fatalf("DecodeIf(other type) = %+v, %v; want nil, nil", p, err)
	}
	if _, err := events.DecodeIf(&bad, "NamespaceDeleted"); err == nil {
		t.Fatal("DecodeIf(named type, bad payload) decoded")
	}
}
