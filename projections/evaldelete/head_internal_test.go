package evaldelete

import (
	"reflect"
	"strings"
	"testing"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/ordoplane/ordo/events"
)

// head decodes the same fields as events.Evaluation (same msgpack keys),
// and holds every field the fast filter path reads: otherwise a filter
// would see an empty field where the eval has a value.
func TestHeadMatchesEvaluation(t *testing.T) {
	full := reflect.TypeFor[events.Evaluation]()
	ht := reflect.TypeFor[head]()
	tag := func(f reflect.StructField) string { return strings.Split(f.Tag.Get("msgpack"), ",")[0] }
	for i := range ht.NumField() {
		hf := ht.Field(i)
		ef, ok := full.FieldByName(hf.Name)
		if !ok || tag(ef) != tag(hf) || ef.Type != hf.Type {
			t.Errorf("head.%s (msgpack %q) does not match events.Evaluation's field", hf.Name, tag(hf))
		}
	}
	for name := range stringFields {
		if _, ok := ht.FieldByName(name); !ok {
			t.Errorf("the fast path reads %s, which head does not decode", name)
		}
	}
}

// The hand decoder reads what a struct decode of the same fields reads,
// whatever else the eval holds (maps, nested structs, absent fields).
func TestHeadDecodesAsStruct(t *testing.T) {
	evs := []events.Evaluation{
		{},
		{ID: "e1", Namespace: "default", Type: "service", TriggeredBy: "job-register", JobID: "web", Status: "pending"},
		{ID: "e2", Namespace: "ns", Priority: 70, JobID: "batch", NodeID: "n1", DeploymentID: "d1", Status: "blocked",
			StatusDescription: "no capacity", ClassEligibility: map[string]bool{"a": true, "b": false}, EscapedComputedClass: true,
			QueuedAllocations: map[string]int{"web": 3}, FailedTGAllocs: map[string]*events.AllocMetric{"web": {NodesEvaluated: 4}},
			NextEval: "e3", CreateTime: 12, ModifyTime: 13, SnapshotIndex: 9},
	}
	for _, e := range evs {
		b, err := events.Marshal(&e)
		if err != nil {
			t.Fatal(err)
		}
		var want head // decoded by reflection, by its tags
		got, err := decodeHead(b)
		if err != nil {
			t.Fatal(err)
		}
		if err := msgpack.Unmarshal(b, &want); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Fatalf("hand-decoded head %+v, want %+v", got, want)
		}
	}
	// A truncated row is an error, not a partial head.
	b, _ := events.Marshal(&evs[2])
	if _, err := decodeHead(b[:len(b)/2]); err == nil {
		t.Fatal("a truncated row decoded")
	}
}
