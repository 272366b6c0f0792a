package scheduler_test

import (
	"slices"
	"testing"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/processors/scheduler"
	"github.com/ordoplane/ordo/processors/scheduler/schedulertest"
)

// TestGroupChanged checks what makes an update destructive.
func TestGroupChanged(t *testing.T) {
	base := schedulertest.Job("web", events.JobTypeService, 3)
	scaled := *base
	scaled.TaskGroups = slices.Clone(base.TaskGroups)
	scaled.TaskGroups[0].Count = 5
	changed := schedulertest.Job("web", events.JobTypeService, 3)
	changed.TaskGroups[0].Tasks[0].Config = events.TaskConfig{"command": "/bin/false"}
	meta := schedulertest.Job("web", events.JobTypeService, 3)
	meta.TaskGroups[0].Meta = map[string]string{"k": "v"}
	for _, tc := range []struct {
		name     string
		old, cur *events.Job
		group    string
		want     bool
	}{
		{"same", base, base, "web", false},
		{"count only", base, &scaled, "web", false},
		{"task config", base, changed, "web", true},
		{"group meta", base, meta, "web", true},
		{"group added", base, changed, "db", false},
		{"group new in cur", &events.Job{}, base, "web", true},
	} {
		if got := scheduler.GroupChanged(tc.old, tc.cur, tc.group); got != tc.want {
			t.Errorf("%s: GroupChanged = %v, want %v", tc.name, got, tc.want)
		}
	}
}
