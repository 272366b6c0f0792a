package events

import (
	"reflect"
	"strings"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

// fullAllocation sets every field of an allocation.
func fullAllocation() Allocation {
	yes := true
	return Allocation{ID: "a1", Namespace: "ns", EvalID: "e1", Name: "web.web[0]", NodeID: "n1", NodeName: "node one",
		JobID: "web", JobVersion: 1 << 40, TaskGroup: "web", Resources: Resources{CPU: 100, MemoryMB: 64, DiskMB: -3, MemoryMaxMB: 256},
		DesiredStatus: AllocDesiredRun, DesiredDescription: "dd", DesiredTransition: DesiredTransition{Migrate: &yes},
		ClientStatus: AllocClientRunning, ClientDescription: "cd",
		TaskStates:   map[string]*TaskState{"server": {State: TaskStateRunning, Restarts: 2, Events: []TaskEvent{{Type: TaskEventStarted}}}},
		DeploymentID: "d1", DeploymentStatus: &AllocDeploymentStatus{Healthy: &yes, Timestamp: 9, Canary: true},
		PreviousAllocation: "a0", NextAllocation: "a2", RescheduleEvents: []RescheduleEvent{{RescheduleTime: 5, PrevAllocID: "a0", PrevNodeID: "n0"}},
		FollowupEvalID: "e2", Metrics: &AllocMetric{NodesEvaluated: 3, NodesAvailable: map[string]int{"dc1": 2}},
		SigningKeyID: "k", CreateTime: -7, ModifyTime: 1 << 50}
}

// reflectedAllocation decodes data into an allocation by reflection.
func reflectedAllocation(data []byte) (Allocation, error) {
	var p plainAllocation
	err := msgpack.Unmarshal(data, &p)
	return Allocation(p), err
}

// TestAllocationDecoder: every field of an allocation, alone and in a
// placement's payload, decodes from bytes as reflection decodes it (also
// into an allocation already set), and a reader that is not a byte
// slice's gets reflection's answer.
func TestAllocationDecoder(t *testing.T) {
	for _, a := range []Allocation{{}, {ID: "x"}, fullAllocation()} {
		data, err := Marshal(&a)
		if err != nil {
			t.Fatal(err)
		}
		if want, err := reflectedAllocation(data); err != nil || !reflect.DeepEqual(want, a) {
			t.Fatalf("reflection: %+v, %v; encoded %+v", want, err, a)
		}
		sameAsReflection(t, data, new(Allocation), new(plainAllocation))
		sameAsReflection(t, data, &Allocation{NodeName: "kept", ID: "old"}, &plainAllocation{NodeName: "kept", ID: "old"})
		var viaReader Allocation
		if err := msgpack.Unmarshal(data, &viaReader); err != nil || !reflect.DeepEqual(viaReader, a) {
			t.Fatalf("through a reader: %+v, %v", viaReader, err)
		}
	}
	samePayload(t, &AllocsPlaced{EvalID: "e1", Allocs: []Allocation{fullAllocation(), {ID: "b"}}})
}

// samePayload fails unless p, in an event, decodes back to itself.
func samePayload(t *testing.T, p Payload) {
	t.Helper()
	ev, err := New("ev", p)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(&ev)
	if err != nil || !reflect.DeepEqual(got, p) {
		t.Fatalf("payload %+v, %v; want %+v", got, err, p)
	}
}

func FuzzAllocationDecoder(f *testing.F) {
	full := fullAllocation()
	addEncoded(f, &Allocation{}, &full)
	f.Add([]byte{0xc0})
	f.Add([]byte{0x81, 0xa3, 'r', 'e', 's', 0xc0})
	f.Fuzz(func(t *testing.T, data []byte) {
		if checkStructure(data) == nil {
			sameAsReflection(t, data, new(Allocation), new(plainAllocation))
		}
	})
}

// sameEncoding fails unless a encodes to the bytes reflection writes.
func sameEncoding(t *testing.T, a Allocation) {
	t.Helper()
	p := plainAllocation(a)
	encodesAsPlain(t, &a, &p, &AllocsPlaced{Allocs: []Allocation{a}})
}

// TestAllocationEncoder: an allocation with every field set, none, and
// each field set alone encodes as reflection does.
func TestAllocationEncoder(t *testing.T) {
	full := fullAllocation()
	sameEncoding(t, Allocation{})
	sameEncoding(t, full)
	fv := reflect.ValueOf(full)
	for i := range fv.NumField() {
		var one Allocation
		reflect.ValueOf(&one).Elem().Field(i).Set(fv.Field(i))
		sameEncoding(t, one)
	}
	sameEncoding(t, Allocation{Resources: Resources{DiskMB: 1}, JobVersion: 300, CreateTime: 1, ModifyTime: -200,
		Name: strings.Repeat("x", 40), NodeName: strings.Repeat("y", 300), ID: strings.Repeat("z", 70000)})
}

func FuzzAllocationEncoder(f *testing.F) {
	full := fullAllocation()
	addEncoded(f, &full)
	f.Fuzz(func(t *testing.T, data []byte) {
		if checkStructure(data) != nil {
			return
		}
		a, err := reflectedAllocation(data)
		if err != nil {
			return
		}
		sameEncoding(t, a)
	})
}
