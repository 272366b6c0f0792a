package events

import (
	"reflect"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

// samePayloadDecoding fails unless data decodes from bytes into a fresh
// value of each payload type with a decoder of its own as reflection
// decodes it into its plain twin: the same value, or an error from both.
func samePayloadDecoding(t *testing.T, data []byte) {
	t.Helper()
	for _, c := range []struct{ fast, plain any }{
		{new(AllocsPlaced), new(plainAllocsPlaced)},
		{new(AllocsClientUpdated), new(plainAllocsClientUpdated)},
		{new(EvalsUpserted), new(plainEvalsUpserted)},
	} {
		werr := msgpack.Unmarshal(data, c.plain)
		gerr := decode(data, c.fast)
		if (werr == nil) != (gerr == nil) {
			t.Fatalf("%T from bytes: %v, reflection: %v", c.fast, gerr, werr)
		}
		want := reflect.ValueOf(c.plain).Elem().Convert(reflect.TypeOf(c.fast).Elem()).Interface()
		if werr == nil && !reflect.DeepEqual(reflect.ValueOf(c.fast).Elem().Interface(), want) {
			t.Fatalf("%T from bytes %+v\nreflection %+v", c.fast, c.fast, want)
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
	for _, p := range []any{
		&AllocsPlaced{EvalID: "e", Allocs: []Allocation{fullAllocation()}},
		&AllocsClientUpdated{NodeID: "n", Updates: []AllocClientUpdate{fullClientUpdate()}},
		&EvalsUpserted{Evals: []Evaluation{fullEvaluation()}},
	} {
		data, err := Marshal(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if checkStructure(data) != nil {
			return
		}
		samePayloadDecoding(t, data)
	})
}
