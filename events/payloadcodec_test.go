package events

import (
	"reflect"
	"testing"
)

// samePayloadDecoding fails unless data decodes from bytes into a fresh
// value of each payload type with a decoder of its own as reflection
// decodes it.
func samePayloadDecoding(t *testing.T, data []byte) {
	t.Helper()
	sameAsReflection(t, data, new(AllocsPlaced), new(plainAllocsPlaced))
	sameAsReflection(t, data, new(AllocsClientUpdated), new(plainAllocsClientUpdated))
	sameAsReflection(t, data, new(EvalsUpserted), new(plainEvalsUpserted))
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
