package ui

import (
	"strconv"
	"strings"
	"testing"
	"time"

	napi "github.com/hashicorp/nomad/api"

	"github.com/ordoplane/ordo/test/testagent"
)

// echoJob is a service job of one exec task that writes a known line to
// stdout and another to stderr, then sleeps, with a dynamic port; an
// update block makes each version a deployment.
func echoJob(id string) *napi.Job {
	j := napi.NewServiceJob(id, id, "global", 50)
	j.Datacenters = []string{"dc1"}
	j.Update = &napi.UpdateStrategy{
		MaxParallel:     new(1),
		MinHealthyTime:  new(time.Second),
		HealthyDeadline: new(time.Minute),
	}
	tg := napi.NewTaskGroup(id, 1)
	tg.Networks = []*napi.NetworkResource{{DynamicPorts: []napi.Port{{Label: "http"}}}}
	task := napi.NewTask("main", "exec").SetConfig("command", "/bin/sh").
		SetConfig("args", []string{"-c", "echo hello-from-ui; echo oops-from-ui >&2; sleep 1000"})
	task.Require(&napi.Resources{CPU: new(100), MemoryMB: new(32)})
	tg.AddTask(task)
	j.AddTaskGroup(tg)
	return j
}

// runningAlloc registers j and waits for its one allocation to run; it
// returns the allocation's stub.
func runningAlloc(t *testing.T, s *session, j *napi.Job) *napi.AllocationListStub {
	t.Helper()
	testagent.Register(t, s.api, j)
	var alloc *napi.AllocationListStub
	testagent.WaitFor(t, testagent.ServerTimeout, "the allocation running", func() bool {
		list, _, err := s.api.Jobs().Allocations(*j.ID, false, nil)
		if err != nil || len(list) != 1 || list[0].ClientStatus != "running" {
			return false
		}
		alloc = list[0]
		return true
	})
	return alloc
}

// The allocations page lists the allocation; its page shows the task's
// events and port; the logs tab tails stdout, switches to stderr and
// back, and follows the task through a restart from the page; in the past
// the logs tab says logs are live only.
func TestAllocationLogsTab(t *testing.T) {
	s := start(t)
	alloc := runningAlloc(t, s, echoJob("echo"))

	s.open("/allocations")
	s.waitText("main table", "echo")
	s.shot("allocations")
	s.checkA11y("allocations")
	s.fill("main form.filter input", `JobID == "nope"`)
	s.click("main form.filter button", "Apply")
	s.waitText("main", "No allocations")
	s.fill("main form.filter input", `JobID == "echo"`)
	s.click("main form.filter button", "Apply")
	s.click("main table a", alloc.ID[:8])
	s.waitText("main h1", alloc.ID[:8])
	s.waitText("main table", "Task started") // the task's events, newest first
	s.waitText("main", "Restarts")
	s.waitText("main table[aria-label=ports]", "http")
	s.shot("allocation")
	s.checkA11y("allocation")

	s.click("main .tabs a", "logs")
	s.waitText("main pre.log", "hello-from-ui")
	s.click("main .switch button", "stderr")
	s.waitText("main pre.log", "oops-from-ui")
	s.waitNoText("main pre.log", "hello-from-ui")
	s.click("main .switch button", "stdout")
	s.waitText("main pre.log", "hello-from-ui")
	s.shot("allocation-logs")
	s.checkA11y("allocation logs")

	// Restart from the page: the tail follows the task into its second
	// run, and the overview shows the restart.
	if err := s.eval(`window.confirm = () => true`, nil); err != nil {
		t.Fatal(err)
	}
	s.click("main .write button", "Restart")
	testagent.WaitFor(t, testagent.ServerTimeout, "the line written again", func() bool {
		return strings.Count(s.textOf("main pre.log"), "hello-from-ui") == 2
	})
	s.click("main .tabs a", "overview")
	s.waitText("main table", "Restart Signaled")

	at := lastIndex(t, s)
	s.open("/allocations/" + alloc.ID + "/logs?at_index=" + strconv.FormatUint(at, 10))
	s.waitText("main", "Logs are live only")
}
