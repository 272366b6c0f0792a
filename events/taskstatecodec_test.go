package events

import (
	"bytes"
	"math"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

// plainTaskState is TaskState without its encoder: what reflection writes.
type plainTaskState TaskState

// sameTaskStateEncoding fails t unless s encodes as reflection encodes
// it, alone and as an allocation's task state.
func sameTaskStateEncoding(t *testing.T, s TaskState) {
	t.Helper()
	p := plainTaskState(s)
	encodesAsPlain(t, &s, &p, &Allocation{ID: "a", TaskStates: map[string]*TaskState{"t": &s}})
}

// TestTaskStateEncoder: a task state with every field set, none, each
// alone and at the ends of its types' ranges encodes as reflection does.
func TestTaskStateEncoder(t *testing.T) {
	full := TaskState{State: TaskStateRunning, Failed: true, Restarts: 3, StartedAt: 1e18, FinishedAt: -5,
		Events: []TaskEvent{{Type: TaskEventStarted, Time: 7, Message: "ok"}, {Type: TaskEventKilled, ExitCode: 137}}}
	states := []TaskState{{}, full, {State: "pending"}, {Failed: true}, {Restarts: 1}, {Restarts: -1},
		{Restarts: math.MaxInt}, {Restarts: math.MinInt}, {StartedAt: 1}, {StartedAt: math.MaxInt64},
		{FinishedAt: math.MinInt64}, {FinishedAt: 127}, {Events: []TaskEvent{{}}}}
	for _, s := range states {
		sameTaskStateEncoding(t, s)
	}
	var nilState *TaskState // a nil state in a map encodes as reflection's nil
	got, err := Marshal(map[string]*TaskState{"t": nilState})
	if err != nil {
		t.Fatal(err)
	}
	want, err := Marshal(map[string]*plainTaskState{"t": nil})
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("a nil state encoded %x, reflection %x (%v)", got, want, err)
	}
}

// FuzzTaskStateEncoder: any task state reflection decodes encodes as
// reflection encodes it.
func FuzzTaskStateEncoder(f *testing.F) {
	for _, s := range []TaskState{{}, {State: "dead", Failed: true, Restarts: 2, StartedAt: 1, FinishedAt: 2,
		Events: []TaskEvent{{Type: TaskEventTerminated, ExitCode: 1}}}} {
		p := plainTaskState(s)
		data, err := Marshal(&p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if checkStructure(data) != nil {
			return
		}
		var p plainTaskState
		if msgpack.Unmarshal(data, &p) != nil {
			return
		}
		sameTaskStateEncoding(t, TaskState(p))
	})
}
