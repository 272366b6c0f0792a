package services_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/ordoplane/ordo/client/allocrunner"
	"github.com/ordoplane/ordo/client/services"
	"github.com/ordoplane/ordo/events"
)

func testNode() *events.Node {
	return &events.Node{ID: "node-1", Name: "client-1", Datacenter: "dc2", Meta: map[string]string{"rack": "r7"}}
}

// webView is an allocation of a two-task group with group and task
// services, its "server" task running.
func webView() allocrunner.ServiceView {
	job := &events.Job{ID: "web", Name: "web", Type: events.JobTypeService, TaskGroups: []events.TaskGroup{{
		Name: "api",
		Services: []events.Service{{Name: "${NOMAD_JOB_NAME}-api", PortLabel: "http", Tags: []string{"v1", "rack-${meta.rack}"},
			CanaryTags: []string{"canary"},
			Checks: []events.ServiceCheck{{Type: events.CheckTypeHTTP, Path: "/health/${NOMAD_TASK_NAME}"},
				{Name: "admin alive", Type: events.CheckTypeTCP, PortLabel: "admin"}}}},
		Tasks: []events.Task{
			{Name: "server", Services: []events.Service{
				{Name: "admin", PortLabel: "admin", AddressMode: events.AddressModeAlloc},
				{Name: "fixed", PortLabel: "8500", Address: "10.9.9.9"},
				{Name: "elsewhere", Provider: "consul", PortLabel: "http"},
			}},
			{Name: "sidecar", Services: []events.Service{{Name: "side", PortLabel: "http"}}},
		},
	}}}
	a := events.Allocation{ID: "a1", Namespace: "prod", JobID: "web", TaskGroup: "api",
		AllocatedResources: &events.AllocatedResources{Shared: events.AllocatedSharedResources{Ports: []events.PortMapping{
			{Label: "http", Value: 23456, HostIP: "10.0.0.7"},
			{Label: "admin", Value: 9000, To: 8080, HostIP: "10.0.0.7"},
		}}}}
	return allocrunner.ServiceView{Alloc: a, Job: job, Tasks: map[string]allocrunner.ServiceTask{
		"server":  {Running: true, Env: map[string]string{"NOMAD_JOB_NAME": "web", "NOMAD_TASK_NAME": "server"}},
		"sidecar": {Running: false},
	}}
}

func TestInstances(t *testing.T) {
	insts, errs := services.Instances(webView(), testNode())
	if len(errs) != 0 {
		t.Fatalf("errors: %v", errs)
	}
	type row struct {
		ID, Name, Addr string
		Port           int
		Tags           []string
		Task           string
	}
	var got []row
	for _, in := range insts {
		r := in.Reg
		if r.Namespace != "prod" || r.NodeID != "node-1" || r.Datacenter != "dc2" || r.JobID != "web" || r.AllocID != "a1" {
			t.Errorf("%s: identity fields %+v", r.ID, r)
		}
		got = append(got, row{r.ID, r.ServiceName, r.Address, r.Port, r.Tags, in.Task})
	}
	want := []row{
		// The alloc address mode advertises the port inside the task.
		{"_nomad-task-a1-server-admin-admin", "admin", "10.0.0.7", 8080, nil, "server"},
		// An explicit address takes a numeric port.
		{"_nomad-task-a1-server-fixed-8500", "fixed", "10.9.9.9", 8500, nil, "server"},
		// The group's service, interpolated with the first running task's env
		// and the node; the consul service and the stopped task's are absent.
		{"_nomad-task-a1-group-api-web-api-http", "web-api", "10.0.0.7", 23456, []string{"v1", "rack-r7"}, ""},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("instances:\n got %+v\nwant %+v", got, want)
	}
	g := insts[2]
	if len(g.Checks) != 2 || g.CheckTask != "server" {
		t.Fatalf("group checks %+v (task %q)", g.Checks, g.CheckTask)
	}
	if c := g.Checks[0]; c.Name != `service: "web-api" check` || c.Path != "/health/server" || c.Address != "10.0.0.7" || c.Port != 23456 {
		t.Errorf("http check %+v", c)
	}
	if c := g.Checks[1]; c.Name != "admin alive" || c.Port != 9000 || c.TaskName != "server" {
		t.Errorf("tcp check on its own port label %+v", c)
	}
	if st := g.Reg.Checks; len(st) != 2 || st[0].Status != events.CheckPending {
		t.Errorf("initial check statuses %+v", st)
	}
}

func TestInstancesCanaryStoppingAndErrors(t *testing.T) {
	v := webView()
	v.Alloc.DeploymentStatus = &events.AllocDeploymentStatus{Canary: true}
	insts, _ := services.Instances(v, testNode())
	if tags := insts[2].Reg.Tags; !reflect.DeepEqual(tags, []string{"canary"}) {
		t.Errorf("canary tags %v", tags)
	}

	v.Stopping = true
	if insts, _ := services.Instances(v, testNode()); len(insts) != 0 {
		t.Errorf("a stopping allocation registers %d instances", len(insts))
	}

	v = webView()
	v.Tasks["server"] = allocrunner.ServiceTask{}
	if insts, _ := services.Instances(v, testNode()); len(insts) != 0 {
		t.Errorf("no task running: %d instances", len(insts))
	}

	v = webView()
	v.Job.TaskGroups[0].Tasks[0].Services = []events.Service{{Name: "bad", PortLabel: "nope"}, {Name: "num", PortLabel: "80"}}
	insts, errs := services.Instances(v, testNode())
	if len(errs) != 2 || !strings.Contains(errs[0].Error(), `invalid port "nope"`) || !strings.Contains(errs[1].Error(), `invalid port "80"`) {
		t.Fatalf("errors %v", errs)
	}
	if len(insts) != 1 {
		t.Fatalf("the valid group service still registers: %d", len(insts))
	}
}
