package events

import (
	"reflect"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

// samePayloadDecoding fails unless data decodes from bytes into a fresh
// value of each payload type with a decoder of its own as reflection
// decodes it.
func samePayloadDecoding(t *testing.T, data []byte) {
	t.Helper()
	sameAsReflection(t, data, new(AllocsPlaced), new(plainAllocsPlaced))
	sameAsReflection(t, data, new(AllocsClientUpdated), new(plainAllocsClientUpdated))
	sameAsReflection(t, data, new(EvalsUpserted), new(plainEvalsUpserted))
	sameDirect(t, data, new(AllocsPlaced), new(plainAllocsPlaced))
	sameDirect(t, data, new(AllocsClientUpdated), new(plainAllocsClientUpdated))
	sameDirect(t, data, new(EvalsUpserted), new(plainEvalsUpserted))
}

// sameDirect fails t unless a direct decode of data into fast
// (decodeDirect, which skips the msgpack decoder), when it takes it,
// holds what reflection decodes into plain, fast's type without its
// decoder.
func sameDirect(t *testing.T, data []byte, fast Payload, plain any) {
	t.Helper()
	if !decodeDirect(data, fast, false) {
		return
	}
	if err := msgpack.Unmarshal(data, plain); err != nil {
		t.Fatalf("%T decoded directly, reflection fails: %v", fast, err)
	}
	got := reflect.ValueOf(fast).Elem().Interface()
	want := reflect.ValueOf(plain).Elem().Convert(reflect.TypeOf(fast).Elem()).Interface()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%T decoded directly %+v\nreflection %+v", fast, got, want)
	}
}

// TestPayloadsDecodeDirectly: the plain forms ordo writes of placements,
// client updates and evaluation upserts decode without a msgpack decoder
// (decodeDirect), as the payloads of every archived event do; trailing
// bytes send them to the decoder.
func TestPayloadsDecodeDirectly(t *testing.T) {
	for _, p := range []Payload{
		&AllocsPlaced{EvalID: "e", Allocs: []Allocation{fullAllocation(), {ID: "b"}}},
		&AllocsClientUpdated{NodeID: "n", Updates: []AllocClientUpdate{fullClientUpdate(), {ID: "c"}}},
		&EvalsUpserted{Evals: []Evaluation{fullEvaluation(), {}}},
	} {
		data, err := Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		got := reflect.New(reflect.TypeOf(p).Elem()).Interface().(Payload)
		if !decodeDirect(data, got, false) || !reflect.DeepEqual(got, p) {
			t.Errorf("%T: not decoded directly, or to %+v", p, got)
		}
		if decodeDirect(append(data, 0xc0), reflect.New(reflect.TypeOf(p).Elem()).Interface().(Payload), false) {
			t.Errorf("%T with a trailing byte decoded directly", p)
		}
	}
}

// TestPayloadDecoders: placements, client updates and evaluation upserts
// decode from bytes as reflection does: full, empty, nil and empty slices.
func TestPayloadDecoders(t *testing.T) {
	for _, p := range []any{
		&AllocsPlaced{EvalID: "e", Allocs: []Allocation{fullAllocation(), {ID: "b"}}},
		&AllocsPlaced{},
		&AllocsPlaced{Allocs: []Allocation{}},
		&AllocsClientUpdated{NodeID: "n", Updates: []AllocClientUpdate{fullClientUpdate(), {ID: "c"}}},
		&EvalsUpserted{Evals: []Evaluation{fullEvaluation(), {}}},
		&EvalsUpserted{Evals: []Evaluation{}},
	} {
		data, err := Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		samePayloadDecoding(t, data)
		got := reflect.New(reflect.TypeOf(p).Elem()).Interface()
		if err := decode(data, got); err != nil || !reflect.DeepEqual(got, p) {
			t.Fatalf("decoded %+v, %v; encoded %+v", got, err, p)
		}
	}
}

func FuzzPayloadDecoders(f *testing.F) {
	addEncoded(f, &AllocsPlaced{EvalID: "e", Allocs: []Allocation{fullAllocation()}},
		&AllocsClientUpdated{NodeID: "n", Updates: []AllocClientUpdate{fullClientUpdate()}},
		&EvalsUpserted{Evals: []Evaluation{fullEvaluation()}})
	f.Fuzz(func(t *testing.T, data []byte) {
		if checkStructure(data) != nil {
			return
		}
		samePayloadDecoding(t, data)
	})
}
