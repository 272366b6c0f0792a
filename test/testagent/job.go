package testagent

import (
	"testing"

	"github.com/hashicorp/nomad/api"
)

// SleepJob returns a job of kind ("service", "batch" or "system") named id
// in dc1: one group of count exec tasks running /bin/sleep 1000, each
// asking cpu MHz and 32 MB.
func SleepJob(kind, id string, count, cpu int) *api.Job {
	var j *api.Job
	switch kind {
	case "batch":
		j = api.NewBatchJob(id, id, "global", 50)
	case "system":
		j = api.NewSystemJob(id, id, "global", 50)
	default:
		j = api.NewServiceJob(id, id, "global", 50)
	}
	j.Datacenters = []string{"dc1"}
	tg := api.NewTaskGroup(id, count)
	task := api.NewTask("main", "exec").SetConfig("command", "/bin/sleep").SetConfig("args", []string{"1000"})
	task.Require(&api.Resources{CPU: &cpu, MemoryMB: new(32)})
	tg.AddTask(task)
	j.AddTaskGroup(tg)
	return j
}

// Register registers j through c, failing t when it is refused.
func Register(t testing.TB, c *api.Client, j *api.Job) {
	t.Helper()
	if _, _, err := c.Jobs().Register(j, nil); err != nil {
		t.Fatalf("register %s: %v", *j.ID, err)
	}
}
