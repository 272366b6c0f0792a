package client_test

import (
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"

	"github.com/ordoplane/ordo/client"
	execdriver "github.com/ordoplane/ordo/client/driver/exec"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/test/testagent"
)

// serviceInstances reads service name's instances from the servers with
// their checks' statuses (nomad/api's type has no checks).
func serviceInstances(t *testing.T, addr, name string) []events.ServiceRegistration {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/v1/service/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out []events.ServiceRegistration
	if resp.StatusCode != http.StatusOK {
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out
}

// A running allocation's service is registered on the servers with its
// http check's status; its deployment becomes healthy only once the
// check passes; a restarted client registers it again; stopping the job
// removes it.
func TestServicesRegisteredAndChecked(t *testing.T) {
	out, err := exec.Command("python3", "-c", "import sys; print(sys.executable)").Output()
	if err != nil {
		t.Skip("python3 is not available:", err)
	}
	py := strings.TrimSpace(string(out))
	addr, nc := startServer(t)
	ed, err := execdriver.New(execdriver.Config{Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ed.Close() })
	dataDir := t.TempDir()
	clientCfg := client.Config{DataDir: dataDir, Servers: []string{addr}, Drivers: nil}
	c1, stop1 := startClient(t, withDriver(clientCfg, ed))
	waitNodeReady(t, nc, c1.NodeID())

	// python's HTTP server serves its task directory on its dynamic
	// port: /ready is a 404 until the test writes the file.
	job := api.NewServiceJob("web", "web", "global", 50)
	job.Datacenters = []string{"dc1"}
	tg := api.NewTaskGroup("api", 1)
	tg.Networks = []*api.NetworkResource{{DynamicPorts: []api.Port{{Label: "http"}}}}
	tg.Update = &api.UpdateStrategy{HealthCheck: pointer("checks"), MinHealthyTime: pointer(100 * time.Millisecond),
		HealthyDeadline: pointer(time.Minute), ProgressDeadline: pointer(2 * time.Minute)}
	task := api.NewTask("server", "exec").SetConfig("command", py).
		SetConfig("args", []string{"-m", "http.server", "${NOMAD_PORT_http}", "--bind", "${NOMAD_IP_http}"})
	task.KillTimeout = pointer(5 * time.Second)
	task.Require(&api.Resources{CPU: pointer(20), MemoryMB: pointer(32)})
	task.Services = []*api.Service{{Name: "web-${NOMAD_GROUP_NAME}", Provider: "nomad", PortLabel: "http",
		Tags: []string{"v1", "${node.unique.name}"}, Checks: []api.ServiceCheck{{Name: "ready", Type: "http", Path: "/ready",
			Interval: time.Second, Timeout: time.Second}}}}
	tg.AddTask(task)
	job.AddTaskGroup(tg)
	if _, _, err := nc.Jobs().Register(job, nil); err != nil {
		t.Fatal(err)
	}
	testagent.WaitFor(t, 20*time.Second, "the instance registered, its check critical", func() bool {
		regs := serviceInstances(t, addr, "web-api")
		return len(regs) == 1 && len(regs[0].Checks) == 1 && regs[0].Checks[0].Status == events.CheckCritical
	})
	reg := serviceInstances(t, addr, "web-api")[0]
	list := allocs(t, nc, "web")
	if len(list) != 1 {
		t.Fatalf("%d allocations", len(list))
	}
	allocID := list[0].ID
	a, _, err := nc.Allocations().Info(allocID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if a.AllocatedResources == nil || len(a.AllocatedResources.Shared.Ports) != 1 {
		t.Fatalf("allocated ports %+v", a.AllocatedResources)
	}
	port := a.AllocatedResources.Shared.Ports[0]
	if want := "_nomad-task-" + allocID + "-server-web-api-http"; reg.ID != want || reg.Address != port.HostIP ||
		reg.Port != port.Value || reg.NodeID != c1.NodeID() || reg.JobID != "web" || reg.AllocID != allocID ||
		reg.Datacenter != "dc1" || strings.Join(reg.Tags, ",") != "v1,test-node" {
		t.Fatalf("registration %+v, port %+v", reg, port)
	}
	healthy := func() *bool {
		a, _, err := nc.Allocations().Info(allocID, nil)
		if err != nil || a.DeploymentStatus == nil {
			return nil
		}
		return a.DeploymentStatus.Healthy
	}
	// Running well past min_healthy_time, the allocation is not healthy
	// while its check is critical.
	r, _ := c1.Runner(allocID)
	testagent.WaitFor(t, 10*time.Second, "the task running past min_healthy_time", func() bool {
		u, _ := r.ClientUpdate()
		ts := u.TaskStates["server"]
		return u.ClientStatus == "running" && ts != nil && time.Since(time.Unix(0, ts.StartedAt)) > 500*time.Millisecond
	})
	if regs := serviceInstances(t, addr, "web-api"); len(regs) != 1 || regs[0].Checks[0].Status != events.CheckCritical {
		t.Fatalf("instances %+v", regs)
	}
	if h := healthy(); h != nil {
		t.Fatalf("deployment health %v with a critical check", *h)
	}

	if err := os.WriteFile(filepath.Join(r.Dir().TaskDir("server"), "ready"), []byte("ok"), 0o644); err != nil {
		t.Fatal(err)
	}
	testagent.WaitFor(t, 20*time.Second, "the check passing on the servers", func() bool {
		regs := serviceInstances(t, addr, "web-api")
		return len(regs) == 1 && regs[0].Checks[0].Status == events.CheckPassing
	})
	testagent.WaitFor(t, 20*time.Second, "the allocation healthy", func() bool { h := healthy(); return h != nil && *h })

	// A restarted client re-registers what still runs: the instance,
	// deleted meanwhile, comes back.
	stop1()
	if _, err := nc.Services().Delete("web-api", reg.ID, nil); err != nil {
		t.Fatal(err)
	}
	if regs := serviceInstances(t, addr, "web-api"); len(regs) != 0 {
		t.Fatalf("instances after the delete: %+v", regs)
	}
	c2, _ := startClient(t, withDriver(clientCfg, ed))
	testagent.WaitFor(t, 20*time.Second, "the instance registered again", func() bool {
		regs := serviceInstances(t, addr, "web-api")
		return len(regs) == 1 && regs[0].ID == reg.ID && regs[0].Checks[0].Status == events.CheckPassing
	})
	if _, ok := c2.Runner(allocID); !ok {
		t.Fatal("the restarted client has no runner for the allocation")
	}

	if _, _, err := nc.Jobs().Deregister("web", false, nil); err != nil {
		t.Fatal(err)
	}
	testagent.WaitFor(t, 20*time.Second, "the instance gone", func() bool { return len(serviceInstances(t, addr, "web-api")) == 0 })
	testagent.WaitFor(t, 20*time.Second, "the allocation complete", allStatus(t, nc, "web", 1, "complete"))
}

// withDriver returns cfg running the exec driver.
func withDriver(cfg client.Config, ed *execdriver.Driver) client.Config {
	cfg.Drivers = append(cfg.Drivers[:0:0], ed)
	return cfg
}
