package events_test

import (
	"testing"

	"github.com/ordoplane/ordo/events"
)

// Group finds a job's task group by name, and nil for a missing name or a
// nil job.
func TestJobGroup(t *testing.T) {
	j := &events.Job{TaskGroups: []events.TaskGroup{{Name: "web"}, {Name: "api"}}}
	if g := j.Group("api"); g != &j.TaskGroups[1] {
		t.Fatalf("Group(api) = %p, want the job's own group %p", g, &j.TaskGroups[1])
	}
	var none *events.Job
	if j.Group("db") != nil || none.Group("web") != nil {
		t.Fatal("Group found a group that is not there")
	}
}
