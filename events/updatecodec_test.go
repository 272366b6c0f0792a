package events

import "testing"

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
		sameAsReflection(t, data, new(AllocClientUpdate), new(plainClientUpdate))
		kept := func() map[string]*TaskState { return map[string]*TaskState{"old": {State: "x"}} }
		sameAsReflection(t, data, &AllocClientUpdate{ClientDescription: "kept", TaskStates: kept()},
			&plainClientUpdate{ClientDescription: "kept", TaskStates: kept()})
	}
	samePayload(t, &AllocsClientUpdated{NodeID: "n1", Updates: []AllocClientUpdate{fullClientUpdate(), {ID: "b"}}})
}

func FuzzClientUpdateDecoder(f *testing.F) {
	u := fullClientUpdate()
	addEncoded(f, &u)
	f.Add([]byte{0x81, 0xa2, 't', 's', 0x81, 0xa1, 'x', 0x81, 0xa1, 'f', 0xc3})
	f.Fuzz(func(t *testing.T, data []byte) {
		if checkStructure(data) == nil {
			sameAsReflection(t, data, new(AllocClientUpdate), new(plainClientUpdate))
		}
	})
}
