package taskenv

import (
	"maps"
	"net"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/ordoplane/ordo/events"
)

// Task is what a task's environment is built from.
type Task struct {
	Alloc *events.Allocation
	// Job is the allocation's job at its version; nil when unknown.
	Job *events.Job
	// Group is the allocation's task group; nil when unknown.
	Group *events.TaskGroup
	Task  *events.Task
	// Node is the node the task runs on; nil when unknown.
	Node *events.Node
	// AllocDir is the allocation's shared directory (NOMAD_ALLOC_DIR);
	// TaskDir the task's own, whose local/ and secrets/ are
	// NOMAD_TASK_DIR and NOMAD_SECRETS_DIR.
	AllocDir, TaskDir string
	// Extra are variables added after the task's env block, which they
	// override: template env files, a CSI plugin's endpoint.
	Extra map[string]string
}

// Build returns the task's environment: Nomad's NOMAD_* variables (alloc,
// job, group, task, node, directories, limits, meta, ports), then the
// task's env block with its values interpolated, then Extra.
func Build(in Task) *Env {
	vars := map[string]string{}
	a, t := in.Alloc, in.Task
	vars["NOMAD_ALLOC_DIR"] = in.AllocDir
	vars["NOMAD_TASK_DIR"] = joinDir(in.TaskDir, "local")
	vars["NOMAD_SECRETS_DIR"] = joinDir(in.TaskDir, "secrets")
	vars["NOMAD_ALLOC_ID"] = a.ID
	vars["NOMAD_SHORT_ALLOC_ID"] = a.ID[:min(8, len(a.ID))]
	vars["NOMAD_ALLOC_NAME"] = a.Name
	vars["NOMAD_ALLOC_INDEX"] = AllocIndex(a.Name)
	vars["NOMAD_GROUP_NAME"] = a.TaskGroup
	vars["NOMAD_TASK_NAME"] = t.Name
	vars["NOMAD_JOB_ID"] = a.JobID
	vars["NOMAD_NAMESPACE"] = a.Namespace
	vars["NOMAD_REGION"] = "global"
	if in.Node != nil {
		vars["NOMAD_DC"] = in.Node.Datacenter
	}
	if in.Job != nil {
		vars["NOMAD_JOB_NAME"] = in.Job.Name
		if in.Job.ParentID != "" {
			vars["NOMAD_JOB_PARENT_ID"] = in.Job.ParentID
		}
	}
	if t.Resources != nil {
		vars["NOMAD_CPU_LIMIT"] = strconv.Itoa(t.Resources.CPU)
		vars["NOMAD_MEMORY_LIMIT"] = strconv.Itoa(t.Resources.MemoryMB)
		if t.Resources.MemoryMaxMB > 0 { // memory_max, as Nomad names it
			vars["NOMAD_MEMORY_MAX_LIMIT"] = strconv.Itoa(t.Resources.MemoryMaxMB)
		}
	}
	addPorts(vars, a.AllocatedResources.Ports())
	base := New(vars, in.Node)
	meta := map[string]string{}
	if in.Job != nil {
		maps.Copy(meta, in.Job.Meta)
	}
	if in.Group != nil {
		maps.Copy(meta, in.Group.Meta)
	}
	maps.Copy(meta, t.Meta)
	metaVars := map[string]string{}
	for k, v := range meta {
		v = base.Replace(v)
		metaVars["NOMAD_META_"+k] = v
		metaVars["NOMAD_META_"+strings.ToUpper(k)] = v
	}
	maps.Copy(vars, metaVars)
	for k, v := range t.Env {
		vars[k] = base.Replace(v)
	}
	maps.Copy(vars, in.Extra)
	return base
}

// addPorts adds the variables of an allocation's ports: NOMAD_PORT_<label>
// (the port the task listens on: To when set, else the host port),
// NOMAD_HOST_PORT_<label>, NOMAD_IP_<label>, NOMAD_ADDR_<label> and
// NOMAD_HOST_ADDR_<label>. A label's characters that a variable name
// cannot hold ("-") are written "_", as Nomad does.
func addPorts(vars map[string]string, ports []events.PortMapping) {
	for _, p := range ports {
		port := p.Value
		if p.To > 0 {
			port = p.To
		}
		l := envName(p.Label)
		vars["NOMAD_PORT_"+l] = strconv.Itoa(port)
		vars["NOMAD_HOST_PORT_"+l] = strconv.Itoa(p.Value)
		vars["NOMAD_IP_"+l] = p.HostIP
		vars["NOMAD_HOST_IP_"+l] = p.HostIP
		vars["NOMAD_ADDR_"+l] = net.JoinHostPort(p.HostIP, strconv.Itoa(port))
		vars["NOMAD_HOST_ADDR_"+l] = net.JoinHostPort(p.HostIP, strconv.Itoa(p.Value))
	}
}

// envName returns s with every character other than a letter, a digit or
// "_" replaced by "_".
func envName(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '_' || ('0' <= r && r <= '9') || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') {
			return r
		}
		return '_'
	}, s)
}

func joinDir(dir, sub string) string {
	if dir == "" {
		return ""
	}
	return filepath.Join(dir, sub)
}

// AllocIndex returns the index in an allocation's name, "job.group[3]";
// "0" when the name has none.
func AllocIndex(name string) string {
	i := strings.LastIndexByte(name, '[')
	if i < 0 || !strings.HasSuffix(name, "]") {
		return "0"
	}
	return name[i+1 : len(name)-1]
}
