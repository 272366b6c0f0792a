package events

import (
	"reflect"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

// fullClientUpdate sets every field of a client's update.
func fullClientUpdate() AllocClientUpdate {
	yes := true
	return AllocClientUpdate{ID: "a1", ClientStatus: AllocClientFailed, ClientDescription: "oom",
		TaskStates: map[string]*TaskState{
			"server":  {State: TaskStateDead, Failed: true, Restarts: 3, StartedAt: -1, FinishedAt: 1 << 40, Events: []TaskEvent{{Type: TaskEventKilled}}},
			"sidecar": {State: TaskStateRunning},
			"gone":    nil,
		},
		DeploymentStatus: &AllocDeploymentStatus{Healthy: &yes}}
}

// TestClientUpdateDecoder: a client's update decodes from bytes as
// reflection decodes it, alone, in a payload, and into an update already
// set (fields and task states absent from the input kept).
func TestClientUpdateDecoder(t *testing.T) {
	for _, u := range []AllocClientUpdate{{}, {ID: "x", TaskStates: map[string]*TaskState{}}, fullClientUpdate()} {
		data, err := Marshal(&u)
		if err != nil {
			t.Fatal(err)
		}
		var want plainClientUpdate
		if err := msgpack.Unmarshal(data, &want); err != nil {
			t.Fatal(err)
		}
		var got AllocClientUpdate
		if err := decode(data, &got); err != nil || !reflect.DeepEqual(got, AllocClientUpdate(want)) {
			t.Fatalf("from bytes %+v, %v\nreflection %+v", got, err, want)
		}
		kept := AllocClientUpdate{ClientDescription: "kept", TaskStates: map[string]*TaskState{"old": {State: "x"}}}
		keptWant := plainClientUpdate{ClientDescription: "kept", TaskStates: map[string]*TaskState{"old": {State: "x"}}}
		if err := decode(data, &kept); err != nil {
			t.Fatal(err)
		}
		if err := msgpack.Unmarshal(data, &keptWant); err != nil || !reflect.DeepEqual(kept, AllocClientUpdate(keptWant)) {
			t.Fatalf("into a set update: %+v\nreflection %+v", kept, keptWant)
		}
	}
	p := &AllocsClientUpdated{NodeID: "n1", Updates: []AllocClientUpdate{fullClientUpdate(), {ID: "b"}}}
	ev, err := New("ev", p)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(&ev)
	if err != nil || !reflect.DeepEqual(got, p) {
		t.Fatalf("payload %+v, %v; want %+v", got, err, p)
	}
}

func FuzzClientUpdateDecoder(f *testing.F) {
	u := fullClientUpdate()
	data, err := Marshal(&u)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Add([]byte{0x81, 0xa2, 't', 's', 0x81, 0xa1, 'x', 0x81, 0xa1, 'f', 0xc3})
	f.Fuzz(func(t *testing.T, data []byte) {
		if checkStructure(data) != nil {
			return
		}
		var want plainClientUpdate
		werr := msgpack.Unmarshal(data, &want)
		var got AllocClientUpdate
		gerr := decode(data, &got)
		if (werr == nil) != (gerr == nil) {
			t.Fatalf("from bytes: %v, reflection: %v", gerr, werr)
		}
		if werr == nil && !reflect.DeepEqual(got, AllocClientUpdate(want)) {
			t.Fatalf("from bytes %+v\nreflection %+v", got, want)
		}
	})
}
