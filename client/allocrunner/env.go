package allocrunner

import (
	"maps"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/ordoplane/ordo/events"
)

// taskEnv returns a task's environment: Nomad's NOMAD_* variables (alloc,
// job, group, task, directories, limits, meta), the node's (nodeEnv), then
// the task's own env block, which wins.
func taskEnv(a *events.Allocation, job *events.Job, tg *events.TaskGroup, t *events.Task, dir AllocDir, nodeEnv map[string]string) map[string]string {
	env := map[string]string{}
	maps.Copy(env, nodeEnv)
	td := dir.TaskDir(t.Name)
	env["NOMAD_ALLOC_DIR"] = dir.Shared()
	env["NOMAD_TASK_DIR"] = filepath.Join(td, "local")
	env["NOMAD_SECRETS_DIR"] = filepath.Join(td, "secrets")
	env["NOMAD_ALLOC_ID"] = a.ID
	env["NOMAD_SHORT_ALLOC_ID"] = a.ID[:min(8, len(a.ID))]
	env["NOMAD_ALLOC_NAME"] = a.Name
	env["NOMAD_ALLOC_INDEX"] = allocIndex(a.Name)
	env["NOMAD_GROUP_NAME"] = a.TaskGroup
	env["NOMAD_TASK_NAME"] = t.Name
	env["NOMAD_JOB_ID"] = a.JobID
	env["NOMAD_NAMESPACE"] = a.Namespace
	if job != nil {
		env["NOMAD_JOB_NAME"] = job.Name
		if job.ParentID != "" {
			env["NOMAD_JOB_PARENT_ID"] = job.ParentID
		}
	}
	if t.Resources != nil {
		env["NOMAD_CPU_LIMIT"] = strconv.Itoa(t.Resources.CPU)
		env["NOMAD_MEMORY_LIMIT"] = strconv.Itoa(t.Resources.MemoryMB)
	}
	meta := map[string]string{}
	if job != nil {
		maps.Copy(meta, job.Meta)
	}
	if tg != nil {
		maps.Copy(meta, tg.Meta)
	}
	maps.Copy(meta, t.Meta)
	for k, v := range meta {
		env["NOMAD_META_"+k] = v
		env["NOMAD_META_"+strings.ToUpper(k)] = v
	}
	if t.CSIPluginConfig != nil {
		env["CSI_ENDPOINT"] = "unix://" + CSISocket(dir, t) // hooks.go
	}
	maps.Copy(env, t.Env)
	return env
}

// allocIndex returns the index in an allocation's name, "job.group[3]".
func allocIndex(name string) string {
	i := strings.LastIndexByte(name, '[')
	if i < 0 || !strings.HasSuffix(name, "]") {
		return "0"
	}
	return name[i+1 : len(name)-1]
}
