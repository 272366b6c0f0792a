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

// TestValuesDecodeDirectly: the plain forms ordo writes of the values
// that decode themselves from bytes — placements, client updates,
// evaluation upserts, and the allocations, evaluations and client updates
// rows hold — decode without a msgpack decoder (decodeDirect), to what
// they hold; a value without a DecodeMsgpack of its own, or a nil one,
// goes to the decoder.
func TestValuesDecodeDirectly(t *testing.T) {
	for _, v := range []any{
		&AllocsPlaced{EvalID: "e", Allocs: []Allocation{fullAllocation(), {ID: "b"}}},
		&AllocsClientUpdated{NodeID: "n", Updates: []AllocClientUpdate{fullClientUpdate(), {ID: "c"}}},
		&EvalsUpserted{Evals: []Evaluation{fullEvaluation(), {}}},
		ptr(fullAllocation()), ptr(fullEvaluation()), ptr(fullClientUpdate()),
	} {
		data, err := Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		got := reflect.New(reflect.TypeOf(v).Elem()).Interface()
		if !decodeDirect(data, got) || !reflect.DeepEqual(got, v) {
			t.Errorf("%T: not decoded directly, or to %+v", v, got)
		}
	}
	data, err := Marshal(&Resources{CPU: 100})
	if err != nil {
		t.Fatal(err)
	}
	if decodeDirect(data, &Resources{}) {
		t.Error("resources, without a DecodeMsgpack of their own, decoded directly")
	}
	if decodeDirect(data, (*Allocation)(nil)) {
		t.Error("a nil allocation decoded directly")
	}
}

func ptr[T any](v T) *T { return &v }

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
