package events

import (
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
		var want plainEvaluation
		if err := msgpack.Unmarshal(data, &want); err != nil {
			t.Fatal(err)
		}
		var got Evaluation
		if err := decode(data, &got); err != nil || !reflect.DeepEqual(got, Evaluation(want)) {
			t.Fatalf("from bytes %+v, %v\nreflection %+v", got, err, want)
		}
		kept := Evaluation{BlockedEval: "kept", CreateIndex: 4}
		keptWant := plainEvaluation{BlockedEval: "kept", CreateIndex: 4}
		if err := decode(data, &kept); err != nil {
			t.Fatal(err)
		}
		if err := msgpack.Unmarshal(data, &keptWant); err != nil || !reflect.DeepEqual(kept, Evaluation(keptWant)) {
			t.Fatalf("into a set evaluation: %+v\nreflection %+v", kept, keptWant)
		}
	}
	p := &EvalsUpserted{Evals: []Evaluation{fullEvaluation(), {ID: "b"}}}
	ev, err := New("ev", p)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(&ev)
	if err != nil || !reflect.DeepEqual(got, p) {
		t.Fatalf("payload %+v, %v; want %+v", got, err, p)
	}
}

func FuzzEvaluationDecoder(f *testing.F) {
	e := fullEvaluation()
	data, err := Marshal(&e)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Fuzz(func(t *testing.T, data []byte) {
		if checkStructure(data) != nil {
			return
		}
		var want plainEvaluation
		werr := msgpack.Unmarshal(data, &want)
		var got Evaluation
		gerr := decode(data, &got)
		if (werr == nil) != (gerr == nil) {
			t.Fatalf("from bytes: %v, reflection: %v", gerr, werr)
		}
		if werr == nil && !reflect.DeepEqual(got, Evaluation(want)) {
			t.Fatalf("from bytes %+v\nreflection %+v", got, want)
		}
	})
}
