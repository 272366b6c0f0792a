package compat

import (
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
)

// serviceJob builds a job the way a nomad/api user does.
func serviceJob(id string, count int) *api.Job {
	job := api.NewServiceJob(id, id, "global", 60)
	job.Datacenters = []string{"dc1"}
	tg := api.NewTaskGroup("web", count)
	task := api.NewTask("server", "exec").SetConfig("command", "/bin/sleep").SetConfig("args", []string{"1000"})
	task.Require(&api.Resources{CPU: pointer(100), MemoryMB: pointer(64)})
	tg.AddTask(task)
	job.AddTaskGroup(tg)
	return job
}

func pointer[T any](v T) *T { return &v }

func TestJobsWithNomadClient(t *testing.T) {
	_, c := startDev(t)
	jobs := c.Jobs()

	resp, wm, err := jobs.Register(serviceJob("web", 2), nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.EvalID == "" || resp.EvalCreateIndex == 0 || resp.JobModifyIndex != wm.LastIndex {
		t.Fatalf("register = %+v, write meta %+v", resp, wm)
	}

	job, qm, err := jobs.Info("web", nil)
	if err != nil {
		t.Fatal(err)
	}
	if *job.ID != "web" || *job.Type != "service" || *job.Priority != 60 || *job.Version != 0 || *job.Stop ||
		len(job.TaskGroups) != 1 || *job.TaskGroups[0].Count != 2 || job.TaskGroups[0].Tasks[0].Driver != "exec" ||
		*job.JobModifyIndex != resp.JobModifyIndex || *job.Namespace != "default" || *job.Status == "" {
		t.Fatalf("info = %+v", job)
	}
	if qm.LastIndex < wm.LastIndex || !qm.KnownLeader {
		t.Fatalf("info query meta = %+v", qm)
	}

	// EnforceIndex: a stale index is refused, the current one accepted.
	if _, _, err := jobs.EnforceRegister(serviceJob("web", 3), resp.JobModifyIndex+100, nil); err == nil ||
		!strings.Contains(err.Error(), "409") {
		t.Fatalf("stale enforce register: %v", err)
	}
	resp2, _, err := jobs.EnforceRegister(serviceJob("web", 3), resp.JobModifyIndex, nil)
	if err != nil {
		t.Fatal(err)
	}

	list, qm, err := jobs.List(nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].ID != "web" || list[0].JobSummary == nil || list[0].JobModifyIndex != resp2.JobModifyIndex ||
		list[0].Type != "service" || list[0].Priority != 60 {
		t.Fatalf("list = %+v", list)
	}
	if pl, _, err := jobs.PrefixList("we"); err != nil || len(pl) != 1 {
		t.Fatalf("prefix list = %+v, %v", pl, err)
	}
	if pl, _, err := jobs.PrefixList("zz"); err != nil || len(pl) != 0 {
		t.Fatalf("prefix list zz = %+v, %v", pl, err)
	}

	// A blocking list at the list's index wakes on the next registration.
	// The scheduler also changes job summaries, so, like any client, keep
	// blocking from the index each answer returns until the write shows.
	woke := make(chan uint64, 1)
	go func() {
		index := qm.LastIndex
		for {
			list, bm, err := jobs.List(&api.QueryOptions{WaitIndex: index, WaitTime: 10 * time.Second})
			if err != nil || bm.LastIndex == index {
				woke <- 0
				return
			}
			for _, j := range list {
				if j.ID == "nightly" {
					woke <- bm.LastIndex
					return
				}
			}
			index = bm.LastIndex
		}
	}()
	batch := serviceJob("nightly", 1)
	batch.Type = pointer("batch")
	resp3, _, err := jobs.Register(batch, nil)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case idx := <-woke:
		if idx < resp3.JobModifyIndex {
			t.Fatalf("blocking list woke at %d, before the write at %d", idx, resp3.JobModifyIndex)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("blocking list did not wake")
	}

	versions, _, _, err := jobs.Versions("web", false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(versions) != 2 || *versions[0].Version != 1 || *versions[1].Version != 0 || *versions[0].TaskGroups[0].Count != 3 {
		t.Fatalf("versions = %+v", versions)
	}

	sum, _, err := jobs.Summary("web", nil)
	if err != nil {
		t.Fatal(err)
	}
	if sum.JobID != "web" || sum.Namespace != "default" {
		t.Fatalf("summary = %+v", sum)
	}
	if _, ok := sum.Summary["web"]; !ok {
		t.Fatalf("summary has no group web: %+v", sum.Summary)
	}

	// Stop (without shutdown delay, N23), then purge.
	evalID, _, err := jobs.DeregisterOpts("web", &api.DeregisterOptions{NoShutdownDelay: true}, nil)
	if err != nil || evalID == "" {
		t.Fatalf("stop = %q, %v", evalID, err)
	}
	job, _, err = jobs.Info("web", nil)
	if err != nil || !*job.Stop || *job.Version != 2 {
		t.Fatalf("stopped job = %+v, %v", job, err)
	}
	if evalID, _, err := jobs.Deregister("web", true, nil); err != nil || evalID == "" {
		t.Fatalf("purge = %q, %v", evalID, err)
	}
	if _, _, err := jobs.Info("web", nil); err == nil || !strings.Contains(err.Error(), "404") {
		t.Fatalf("info after purge: %v, want a 404", err)
	}

	// Invalid jobs are a 400.
	bad := serviceJob("bad", 1)
	bad.TaskGroups[0].Tasks[0].Driver = ""
	if _, _, err := jobs.Register(bad, nil); err == nil || !strings.Contains(err.Error(), "400") {
		t.Fatalf("register an invalid job: %v, want a 400", err)
	}
}

func TestJobDispatchAndParseWithNomadClient(t *testing.T) {
	_, c := startDev(t)
	jobs := c.Jobs()
	parsed, err := jobs.ParseHCL(`job "report" {
  type = "batch"
  parameterized {
    payload       = "optional"
    meta_required = ["day"]
  }
  group "g" {
    task "t" {
      driver = "exec"
      config { command = "/bin/true" }
    }
  }
}`, true)
	if err != nil {
		t.Fatal(err)
	}
	if *parsed.ID != "report" || parsed.ParameterizedJob == nil || *parsed.TaskGroups[0].Count != 1 {
		t.Fatalf("parsed = %+v", parsed)
	}
	reg, _, err := jobs.Register(parsed, nil)
	if err != nil || reg.EvalID != "" {
		t.Fatalf("register a parameterized job = %+v, %v", reg, err)
	}
	disp, _, err := jobs.Dispatch("report", map[string]string{"day": "mon"}, []byte("input"), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(disp.DispatchedJobID, "report/dispatch-") || disp.EvalID == "" {
		t.Fatalf("dispatch = %+v", disp)
	}
	child, _, err := jobs.Info(disp.DispatchedJobID, nil)
	if err != nil || *child.ParentID != "report" || string(child.Payload) != "input" || child.Meta["day"] != "mon" {
		t.Fatalf("child = %+v, %v", child, err)
	}
	sum, _, err := jobs.Summary("report", nil)
	if err != nil || sum.Children == nil || sum.Children.Pending+sum.Children.Running+sum.Children.Dead != 1 {
		t.Fatalf("parent summary = %+v, %v", sum, err)
	}
	if _, _, err := jobs.Dispatch("report", nil, nil, "", nil); err == nil || !strings.Contains(err.Error(), "400") {
		t.Fatalf("dispatch without required meta: %v, want a 400", err)
	}
}
