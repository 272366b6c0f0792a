package events

import (
	"bytes"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/vmihailenco/msgpack/v5"
)

// fullEvaluation sets every field of an evaluation msgpack carries.
func fullEvaluation() Evaluation {
	return Evaluation{ID: "e1", Namespace: "ns", Priority: 70, Type: JobTypeBatch, TriggeredBy: EvalTriggerJobRegister,
		JobID: "web", JobModifyIndex: 1 << 33, NodeID: "n1", NodeModifyIndex: 7, DeploymentID: "d1",
		Status: EvalStatusBlocked, StatusDescription: "blocked", Wait: 3 * time.Second, WaitUntil: -2,
		NextEval: "e2", PreviousEval: "e0", BlockedEval: "e3", ClassEligibility: map[string]bool{"c1": true, "c2": false},
		EscapedComputedClass: true, QueuedAllocations: map[string]int{"web": 2},
		FailedTGAllocs: map[string]*AllocMetric{"web": {NodesEvaluated: 4}}, SnapshotIndex: 99, CreateTime: 5, ModifyTime: 6}
}

// TestEvaluationDecoder: an evaluation decodes from bytes as reflection
// decodes it, alone, in a payload, and into one already set.
func TestEvaluationDecoder(t *testing.T) {
	for _, e := range []Evaluation{{}, {ID: "x", Wait: -1}, fullEvaluation()} {
		data, err := Marshal(&e)
		if err != nil {
			t.Fatal(err)
		}
		sameAsReflection(t, data, new(Evaluation), new(plainEvaluation))
		sameAsReflection(t, data, &Evaluation{BlockedEval: "kept", CreateIndex: 4}, &plainEvaluation{BlockedEval: "kept", CreateIndex: 4})
	}
	samePayload(t, &EvalsUpserted{Evals: []Evaluation{fullEvaluation(), {ID: "b"}}})
}

func FuzzEvaluationDecoder(f *testing.F) {
	e := fullEvaluation()
	addEncoded(f, &e)
	f.Fuzz(func(t *testing.T, data []byte) {
		if checkStructure(data) == nil {
			sameAsReflection(t, data, new(Evaluation), new(plainEvaluation))
		}
	})
}

// sameEvaluationEncoding fails t unless e encodes as reflection encodes
// it, alone and in a payload.
func sameEvaluationEncoding(t *testing.T, e Evaluation) {
	t.Helper()
	p := plainEvaluation(e)
	encodesAsPlain(t, &e, &p, &EvalsUpserted{Evals: []Evaluation{e}})
}

// TestEvaluationEncoder: an evaluation with every field set, none, and
// each field set alone encodes as reflection does, also as a value in a
// map.
func TestEvaluationEncoder(t *testing.T) {
	full := fullEvaluation()
	sameEvaluationEncoding(t, Evaluation{})
	sameEvaluationEncoding(t, full)
	v := reflect.ValueOf(full)
	for i := range v.NumField() {
		one := reflect.New(v.Type()).Elem()
		one.Field(i).Set(v.Field(i))
		sameEvaluationEncoding(t, one.Interface().(Evaluation))
	}
	sameEvaluationEncoding(t, Evaluation{Priority: math.MinInt, JobModifyIndex: math.MaxUint64, WaitUntil: math.MinInt64, Wait: 1})
	got, err := Marshal(map[string]Evaluation{"e": full})
	if err != nil {
		t.Fatal(err)
	}
	want, err := Marshal(map[string]plainEvaluation{"e": plainEvaluation(full)})
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("in a map: %x, reflection %x (%v)", got, want, err)
	}
}

// FuzzEvaluationEncoder: any evaluation reflection decodes encodes as
// reflection encodes it.
func FuzzEvaluationEncoder(f *testing.F) {
	e := fullEvaluation()
	addEncoded(f, &e)
	f.Fuzz(func(t *testing.T, data []byte) {
		if checkStructure(data) != nil {
			return
		}
		var p plainEvaluation
		if msgpack.Unmarshal(data, &p) != nil {
			return
		}
		sameEvaluationEncoding(t, Evaluation(p))
	})
}
