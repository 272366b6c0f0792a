package schedstate_test

import (
	"testing"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/processors/schedstate"
	"github.com/ordoplane/ordo/processors/scheduler"
)

func TestJobOverlay(t *testing.T) {
	base := scheduler.NewMemState()
	v0 := &events.Job{ID: "web", Namespace: "default", Version: 0}
	other := &events.Job{ID: "db", Namespace: "default"}
	base.UpsertJob(v0)
	base.UpsertJob(other)
	v1 := &events.Job{ID: "web", Namespace: "default", Version: 1}
	o := schedstate.JobOverlay{State: base, NewJob: v1}

	if j, ok := o.Job("default", "web"); !ok || j != v1 {
		t.Fatalf("Job(web) = %+v", j)
	}
	if j, ok := o.Job("default", "db"); !ok || j != other {
		t.Fatalf("Job(db) = %+v", j)
	}
	if _, ok := o.Job("other", "web"); ok {
		t.Fatal("the overlay answered for another namespace")
	}
	if j, ok := o.JobVersion("default", "web", 1); !ok || j != v1 {
		t.Fatalf("JobVersion(web, 1) = %+v", j)
	}
	if j, ok := o.JobVersion("default", "web", 0); !ok || j != v0 {
		t.Fatalf("JobVersion(web, 0) = %+v", j)
	}
	if j, _ := base.Job("default", "web"); j != v0 {
		t.Fatal("the overlay changed the state under it")
	}
}
