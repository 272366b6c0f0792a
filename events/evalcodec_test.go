package events

import (
	"testing"
	"time"
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
