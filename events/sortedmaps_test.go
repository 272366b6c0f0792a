package events_test

import (
	"bytes"
	"fmt"
	"reflect"
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

// TestEveryPayloadMapSorted: every map type a payload holds, however
// deeply, encodes its keys in order (msgpack sorts a few map types itself;
// the others must be registered), so a new payload field of a new map
// type cannot make rebuilt projections differ from live ones.
func TestEveryPayloadMapSorted(t *testing.T) {
	seen := map[reflect.Type]bool{}
	var walk func(reflect.Type)
	walk = func(tp reflect.Type) {
		if seen[tp] {
			return
		}
		seen[tp] = true
		switch tp.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Array:
			walk(tp.Elem())
		case reflect.Struct:
			for i := range tp.NumField() {
				if f := tp.Field(i); f.IsExported() {
					walk(f.Type)
				}
			}
		case reflect.Map:
			walk(tp.Elem())
			if tp.Key().Kind() != reflect.String {
				t.Errorf("%v: a map whose keys are not strings", tp)
				return
			}
			m := reflect.MakeMap(tp)
			for i := range 30 {
				m.SetMapIndex(reflect.ValueOf(fmt.Sprint("k", i)).Convert(tp.Key()), reflect.Zero(tp.Elem()))
			}
			first, err := events.Marshal(m.Interface())
			if err != nil {
				t.Errorf("%v: %v", tp, err)
				return
			}
			for range 10 {
				if again, _ := events.Marshal(m.Interface()); !bytes.Equal(first, again) {
					t.Errorf("%v encodes in Go's map order: add it to sortedMapTypes", tp)
					return
				}
			}
		}
	}
	for _, ty := range events.Types() {
		walk(reflect.TypeOf(ty.New()))
	}
	if len(seen) < 50 {
		t.Fatalf("walked only %d types", len(seen))
	}
}
