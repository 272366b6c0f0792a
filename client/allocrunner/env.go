package allocrunner

import (
	"maps"

	"github.com/ordoplane/ordo/client/taskenv"
	"github.com/ordoplane/ordo/events"
)

// taskEnv returns a task's environment (client/taskenv): Nomad's NOMAD_*
// variables, the task's env block interpolated, then extra (template env
// files) and CSI_ENDPOINT for a CSI plugin task. Its Replace interpolates
// the task's driver config.
func taskEnv(a *events.Allocation, job *events.Job, tg *events.TaskGroup, t *events.Task, dir AllocDir,
	node *events.Node, extra map[string]string) *taskenv.Env {
	ex := maps.Clone(extra)
	if t.CSIPluginConfig != nil {
		if ex == nil {
			ex = map[string]string{}
		}
		ex["CSI_ENDPOINT"] = "unix://" + CSISocket(dir, t) // hooks.go
	}
	return taskenv.Build(taskenv.Task{Alloc: a, Job: job, Group: tg, Task: t, Node: node,
		AllocDir: dir.Shared(), TaskDir: dir.TaskDir(t.Name), Extra: ex})
}
