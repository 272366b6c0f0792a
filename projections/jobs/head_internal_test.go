package jobs

import (
	"reflect"
	"testing"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/ordoplane/ordo/events"
)

// TestJobHeadDecodesStatusFields: the head decode of a job row holds
// every field deriveStatus and moveChild read, equal to the full decode's.
func TestJobHeadDecodesStatusFields(t *testing.T) {
	full := events.Job{ID: "child", Namespace: "ns", Type: events.JobTypeBatch, Stop: true, ParentID: "parent", Dispatched: true,
		Periodic:         &events.PeriodicConfig{Enabled: true, Spec: "* * * * *"},
		ParameterizedJob: &events.ParameterizedJob{Payload: "optional"},
		TaskGroups:       []events.TaskGroup{{Name: "g", Count: 3, Tasks: []events.Task{{Name: "t", Driver: "exec"}}}}}
	b, err := msgpack.Marshal(&events.JobRegistered{Job: full})
	if err != nil {
		t.Fatal(err)
	}
	var h jobHead // as headCodec decodes a job row
	if err := msgpack.Unmarshal(b, &h); err != nil {
		t.Fatal(err)
	}
	head := h.job()
	want := &events.Job{ID: full.ID, Namespace: full.Namespace, Stop: true, ParentID: "parent", Dispatched: true,
		Periodic: full.Periodic, ParameterizedJob: full.ParameterizedJob}
	if !reflect.DeepEqual(head, want) {
		t.Fatalf("head %+v, want %+v", head, want)
	}
	s := &summaryRow{}
	if deriveStatus(head, s) != deriveStatus(&full, s) {
		t.Fatal("status from the head differs from the full job's")
	}
}
