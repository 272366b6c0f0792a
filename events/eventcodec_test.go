package events

import (
	"reflect"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

// plainEvent has Event's fields and tags but no custom decoder, so msgpack
// decodes it by reflection: the reference the hand-written decoder must match.
type plainEvent Event

// TestEventDecoderMatchesReflection checks every event ordo writes decodes
// the same by hand and by reflection.
func TestEventDecoderMatchesReflection(t *testing.T) {
	for _, ev := range []Event{
		{},
		{Type: "T", Version: 3, Index: 1 << 40, Seq: 9, Time: -5, ID: "x", Keys: []Key{{"a", "b"}, {"c", "d"}}, Payload: msgpack.RawMessage{0x91, 0x01}},
		{Type: "T", Payload: msgpack.RawMessage{0xc0}},
	} {
		data, err := EncodeEvent(&ev)
		if err != nil {
			t.Fatal(err)
		}
		var want plainEvent
		if err := msgpack.Unmarshal(data, &want); err != nil {
			t.Fatal(err)
		}
		got, err := DecodeEvent(data)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(Event(want), *got) {
			t.Errorf("custom %+v\nreflection %+v", *got, Event(want))
		}
	}
}

func FuzzEventDecoderMatchesReflection(f *testing.F) {
	ev := Event{Type: "NamespaceUpserted", Version: 2, Index: 7, Seq: 1, Time: 42, ID: "id", Actor: "a",
		CorrelationID: "c", Keys: []Key{{Kind: "namespace", Value: "x"}}, Payload: msgpack.RawMessage{0x80}}
	seed, err := EncodeEvent(&ev)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add([]byte{0x80})
	f.Add([]byte{0x81, 0xa1, 'z', 0x01})
	f.Fuzz(func(t *testing.T, data []byte) {
		if checkStructure(data) != nil || !isMap(data) {
			return // ordo writes events as maps only; reflection also takes arrays
		}
		var want plainEvent
		werr := msgpack.Unmarshal(data, &want)
		var got Event
		gerr := msgpack.Unmarshal(data, &got)
		// DecodeEvent cuts the payload out by its structure instead.
		if sliced, serr := DecodeEvent(data); (serr == nil) != (gerr == nil) {
			t.Fatalf("DecodeEvent: %v, the decoder: %v", serr, gerr)
		} else if serr == nil && !reflect.DeepEqual(*sliced, got) {
			t.Fatalf("DecodeEvent %+v\nthe decoder %+v", *sliced, got)
		}
		if gerr == nil {
			samePredecoded(t, data)
		}
		if werr != nil || gerr != nil {
			// One refuses: reflection also takes structs as arrays, which
			// ordo never writes, and the custom decoder converts integer
			// widths more leniently. Agreement matters where both accept.
			return
		}
		if !reflect.DeepEqual(Event(want), got) {
			t.Fatalf("custom %+v\nreflection %+v", got, Event(want))
		}
	})
}

// isMap reports whether data starts with a msgpack map (or nil).
func isMap(data []byte) bool {
	if len(data) == 0 {
		return false
	}
	c := data[0]
	return c&0xf0 == 0x80 || c == 0xde || c == 0xdf || c == 0xc0
}

// samePredecoded fails unless DecodeEventPredecoded gives the payload
// (or the error) DecodeEvent and Decode give.
func samePredecoded(t *testing.T, data []byte) {
	t.Helper()
	ev, err := DecodeEvent(data)
	if err != nil {
		t.Fatal(err)
	}
	want, werr := Decode(ev)
	pre, err := DecodeEventPredecoded(data)
	if err != nil {
		t.Fatal(err)
	}
	got, gerr := Decode(pre)
	if (werr == nil) != (gerr == nil) || !reflect.DeepEqual(got, want) {
		t.Fatalf("predecoded %+v, %v; decoded %+v, %v", got, gerr, want, werr)
	}
}

// TestDecodeEventPredecoded: a replay's reader decodes an archived
// event's payload, written now or by an older version and upcast, as
// Decode does.
func TestDecodeEventPredecoded(t *testing.T) {
	ev, err := New("e1", &AllocsClientUpdated{NodeID: "n1", Updates: []AllocClientUpdate{{ID: "a1", ClientStatus: AllocClientRunning}}})
	if err != nil {
		t.Fatal(err)
	}
	data, err := EncodeEvent(&ev)
	if err != nil {
		t.Fatal(err)
	}
	samePredecoded(t, data)
	pre, _ := DecodeEventPredecoded(data)
	if p, err := Decode(pre); err != nil || p.(*AllocsClientUpdated).Updates[0].ID != "a1" {
		t.Fatalf("%+v, %v", p, err)
	}
	old, err := Marshal(&namespaceUpsertedV1{Name: "web", Description: "front"})
	if err != nil {
		t.Fatal(err)
	}
	v1 := Event{Type: "NamespaceUpserted", Version: 1, ID: "e2", Payload: old}
	if data, err = EncodeEvent(&v1); err != nil {
		t.Fatal(err)
	}
	samePredecoded(t, data)
	pre, _ = DecodeEventPredecoded(data)
	if p, err := Decode(pre); err != nil || p.(*NamespaceUpserted).Namespace.Name != "web" {
		t.Fatalf("upcast: %+v, %v", p, err)
	}
}
