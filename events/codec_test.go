package events_test

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/events/eventstest"
)

// fullEvent sets every envelope field to a distinct non-zero value.
func fullEvent(t *testing.T) events.Event {
	t.Helper()
	ev := eventstest.New(t, "2ZJ8yQ8Vv1wVJbH7X2m8e0g3k4Q", &events.NamespaceUpserted{Namespace: events.Namespace{
		Name: "web", Description: "front ends", Meta: map[string]string{"a": "1", "b": ""},
	}})
	ev.Index = 1<<40 + 7
	ev.Seq = 1<<31 + 3
	ev.Time = -1_700_000_000_123_456_789
	ev.Actor = "token:ab12"
	ev.CorrelationID = "cmd-77"
	ev.Keys = append(ev.Keys, events.Key{Kind: "job", Value: "web/api"}, events.Key{Kind: "", Value: ""})
	return ev
}

func TestEventRoundTrip(t *testing.T) {
	want := fullEvent(t)
	b := eventstest.EncodeEvent(t, &want)
	got, err := events.DecodeEvent(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(*got, want) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", *got, want)
	}
	// The payload survives byte for byte, so archived events keep the exact
	// bytes their version was written in.
	if !bytes.Equal(got.Payload, want.Payload) {
		t.Fatalf("payload bytes changed: %x -> %x", want.Payload, got.Payload)
	}
	again := eventstest.EncodeEvent(t, got)
	if !bytes.Equal(again, b) {
		t.Fatalf("re-encoding differs:\n%x\n%x", b, again)
	}
}

func TestEntryRoundTrip(t *testing.T) {
	ev1 := fullEvent(t)
	ev2 := eventstest.New(t, "2ZJ8yQ8Vv1wVJbH7X2m8e0g3k4R", &events.ServerRegistered{ID: "s1", RaftAddr: "r:1", HTTPAddr: "h:2"})
	want := events.Entry{
		Time:      1_700_000_000_987_654_321,
		CommandID: "cmd-1",
		Actor:     "operator",
		Preconditions: []events.Precondition{
			{Table: "namespaces", Key: "web", Op: events.Exists},
			{Table: "namespaces", Key: "db", Op: events.Absent},
			{Table: "jobs", Key: "web/api", Op: events.ModifyIndex, Index: 41},
		},
		Events: []events.Event{ev1, ev2},
	}
	b := eventstest.EncodeEntry(t, &want)
	got, err := events.DecodeEntry(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(*got, want) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", *got, want)
	}
	if again := eventstest.EncodeEntry(t, got); !bytes.Equal(again, b) {
		t.Fatalf("re-encoding differs")
	}
	for i := range got.Events {
		p, err := events.Decode(&got.Events[i])
		if err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		wantP, _ := events.Decode(&want.Events[i])
		if !reflect.DeepEqual(p, wantP) {
			t.Errorf("event %d payload %+v, want %+v", i, p, wantP)
		}
	}
}

func TestEntryOmitsEmptyOptionalFields(t *testing.T) {
	// Actor and Preconditions are omitempty; a minimal entry must still
	// round-trip (as nil, not empty).
	want := events.Entry{CommandID: "c", Events: []events.Event{}}
	got, err := events.DecodeEntry(eventstest.EncodeEntry(t, &want))
	if err != nil {
		t.Fatal(err)
	}
	if got.Actor != "" || got.Preconditions != nil || len(got.Events) != 0 || got.CommandID != "c" {
		t.Fatalf("got %+v", got)
	}
}

func TestDecodeRejectsGarbage(t *testing.T) {
	for name, data := range map[string][]byte{
		"empty":      nil,
		"truncated":  eventstest.EncodeEvent(t, ptr(fullEvent(t)))[:10],
		"not a map":  {0x93, 0x01, 0x02, 0x03},
		"wrong type": mustMarshal(t, map[string]any{"t": "not a number"}),
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := events.DecodeEvent(data); err == nil {
				t.Error("DecodeEvent succeeded")
			}
			if _, err := events.DecodeEntry(data); err == nil {
				t.Error("DecodeEntry succeeded")
			}
		})
	}
}

func TestDecodeRejectsOversized(t *testing.T) {
	big := make([]byte, events.MaxEncodedSize+1)
	_, err := events.DecodeEvent(big)
	if err == nil || !strings.Contains(err.Error(), "exceeds") {
		t.Fatalf("DecodeEvent of %d bytes: %v", len(big), err)
	}
	if _, err := events.DecodeEntry(big); err == nil {
		t.Fatal("DecodeEntry accepted an oversized entry")
	}
}

func TestStamp(t *testing.T) {
	e := events.Entry{Time: 99, CommandID: "cmd", Actor: "me", Events: []events.Event{
		eventstest.New(t, "a", &events.ServerRemoved{ID: "x"}),
		eventstest.New(t, "b", &events.ServerRemoved{ID: "y"}),
	}}
	e.Stamp(12)
	for i, ev := range e.Events {
		if ev.Index != 12 || ev.Seq != uint32(i) || ev.Time != 99 || ev.Actor != "me" || ev.CorrelationID != "cmd" {
			t.Errorf("event %d stamped %+v", i, ev)
		}
	}
	if got := e.LeaderTime(); got.UnixNano() != 99 || got.Location().String() != "UTC" {
		t.Errorf("LeaderTime = %v", got)
	}
}

func TestEventKey(t *testing.T) {
	ev := events.Event{Keys: []events.Key{{Kind: "job", Value: "a"}, {Kind: "namespace", Value: "n"}, {Kind: "job", Value: "b"}}}
	if got := ev.Key("job"); got != "a" {
		t.Errorf(`Key("job") = %q, want the first, "a"`, got)
	}
	if got := ev.Key("namespace"); got != "n" {
		t.Errorf(`Key("namespace") = %q`, got)
	}
	if got := ev.Key("node"); got != "" {
		t.Errorf(`Key("node") = %q, want ""`, got)
	}
}

func TestDecodeRejectsInvalidPayloadBytes(t *testing.T) {
	// An Event whose payload is not msgpack still encodes (RawMessage is
	// written as is), but decoding must then fail rather than misread.
	ev := events.Event{Type: "NamespaceDeleted", Version: 1, Payload: msgpack.RawMessage{0xc1}}
	b := eventstest.EncodeEvent(t, &ev)
	if _, err := events.DecodeEvent(b); err == nil {
		t.Fatal("decoded an event whose payload is the reserved byte 0xc1")
	}
}

func ptr[T any](v T) *T { return &v }

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := msgpack.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestEncodingIsDeterministic(t *testing.T) {
	// Payloads and rows with maps must encode to the same bytes every time:
	// replayed projections are compared byte for byte.
	meta := map[string]string{}
	for i := range 32 {
		meta[string(rune('a'+i%26))+strings.Repeat("x", i)] = strings.Repeat("v", i)
	}
	p := &events.NamespaceUpserted{Namespace: events.Namespace{Name: "n", Meta: meta}}
	first := eventstest.New(t, "id", p).Payload
	firstRow, err := events.Marshal(&p.Namespace)
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		if got := eventstest.New(t, "id", p).Payload; !bytes.Equal(got, first) {
			t.Fatalf("New encoded the same payload differently:\n%x\n%x", first, got)
		}
		row, err := events.Marshal(&p.Namespace)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(row, firstRow) {
			t.Fatal("Marshal encoded the same value differently")
		}
	}
	var back events.Namespace
	if err := msgpack.Unmarshal(firstRow, &back); err != nil || !reflect.DeepEqual(back, p.Namespace) {
		t.Fatalf("Marshal output decodes to %+v, %v", back, err)
	}
}
