package events_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/ordoplane/ordo/events"
)

// TestMapsEncodeSorted: maps msgpack would write in random order encode to
// the same bytes every time, and decode back.
func TestMapsEncodeSorted(t *testing.T) {
	big := func() map[string]int {
		m := map[string]int{}
		for i := range 40 {
			m[fmt.Sprint("k", i)] = i
		}
		return m
	}
	ev := events.Evaluation{ID: "e", QueuedAllocations: big(),
		FailedTGAllocs: map[string]*events.AllocMetric{"a": {NodesAvailable: big()}, "b": {ClassExhausted: big()}, "c": nil}}
	al := events.Allocation{ID: "a", TaskStates: map[string]*events.TaskState{"x": {State: "running"}, "y": {State: "dead"}, "z": nil}}
	dep := events.Deployment{ID: "d", TaskGroups: map[string]*events.DeploymentState{"a": {}, "b": {Promoted: true}, "c": {}}}
	node := events.Node{ID: "n", Drivers: map[string]events.DriverInfo{"exec": {Detected: true}, "docker": {}, "raw_exec": {Healthy: true}}}
	for _, v := range []any{&ev, &al, &dep, &node} {
		first, err := events.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		for range 20 {
			again, err := events.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(first, again) {
				t.Fatalf("%T encoded to different bytes", v)
			}
		}
	}
	b, _ := events.Marshal(&ev)
	var back events.Evaluation
	if err := msgpack.Unmarshal(b, &back); err != nil || back.QueuedAllocations["k39"] != 39 || back.FailedTGAllocs["b"].ClassExhausted["k7"] != 7 {
		t.Fatalf("round trip = %+v, %v", back, err)
	}
}
