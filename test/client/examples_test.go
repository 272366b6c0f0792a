// This file runs the shipped jobspecs of docs/examples on a dev
// agent's client, with real processes, and checks each reaches the state
// it is meant to: running, or complete with exit code 0. Files that are
// not jobs, or need what a dev agent has not, are listed with the reason.

package client

import (
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"

	"github.com/ordoplane/ordo/cmd/agent"
	"github.com/ordoplane/ordo/test/testagent"
)

// root is the repository, from this package's directory.
const root = "../.."

// examplesTimeout bounds each example's wait.
const examplesTimeout = 30 * time.Second

// notRunnable are the example files this test does not run, and why.
var notRunnable = map[string]string{
	"docs/examples/agent.hcl":                 "an agent configuration file, not a job (cmd/ordo reads it)",
	"docs/examples/nodepool.hcl":              "a node pool specification, not a job (docs/api.md applies it)",
	"docs/examples/providers/cheap-cloud.hcl": "a launcher provider configuration, not a job",
	"docs/examples/csi/volume.hcl":            "a CSI volume specification, not a job (TestVolumeLifecycle registers it)",
	"docs/examples/csi/csi-plugin.hcl":        "runs the tools/csi-hostpath binary, which TestVolumeLifecycle builds and runs it with",
	"docs/examples/csi/db.hcl":                "needs the csi-hostpath plugin and its volume (TestVolumeLifecycle runs it)",
	"docs/examples/docker.hcl":                "needs a client with a Docker daemon and busybox:1.36 (TestDockerJob runs such a job with a local image)",
}

// check runs one example on the dev agent and waits for its state.
type check func(t *testing.T, c *api.Client, job *api.Job)

// runnable are the examples this test runs, each with how it is checked.
var runnable = map[string]check{
	"docs/examples/hello.hcl":    running(1),
	"docs/examples/web.hcl":      running(1), // count 3 on distinct hosts: the dev agent has one node
	"docs/examples/web.json":     running(1),
	"docs/examples/batch.hcl":    periodicComplete,
	"docs/examples/sysbatch.hcl": dispatchComplete,
	"docs/examples/template.hcl": templateRunning,
}

func TestExamplesReachTheirState(t *testing.T) {
	t.Parallel()
	var files []string
	err := filepath.WalkDir(filepath.Join(root, "docs", "examples"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (strings.HasSuffix(p, ".hcl") || strings.HasSuffix(p, ".json")) {
			rel, _ := filepath.Rel(root, p)
			files = append(files, filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for f := range runnable {
		if !slices.Contains(files, f) {
			t.Errorf("%s is listed, but not in docs/examples", f)
		}
	}
	for f := range notRunnable {
		if !slices.Contains(files, f) {
			t.Errorf("%s is listed, but not in docs/examples", f)
		}
	}
	c := devClient(t)
	for _, f := range files {
		if why, ok := notRunnable[f]; ok {
			t.Logf("%s: not run: %s", f, why)
			continue
		}
		chk, ok := runnable[f]
		if !ok {
			t.Errorf("%s: neither run nor listed as not runnable here (and why)", f)
			continue
		}
		t.Run(filepath.Base(f), func(t *testing.T) {
			t.Parallel()
			job := parse(t, c, f)
			if _, _, err := c.Jobs().Register(job, nil); err != nil {
				t.Fatalf("register %s: %v", *job.ID, err)
			}
			chk(t, c, job)
		})
	}
}

// devClient starts a dev agent with a client for the examples.
func devClient(t *testing.T) *api.Client {
	_, c, _ := testagent.StartDevClient(t, func(cfg *agent.Config) { cfg.Logger = slog.New(slog.DiscardHandler) })
	return c
}

// parse reads an example: HCL through the agent's parser, JSON as the
// API's {"Job": …}; web.json is renamed so it runs beside web.hcl.
func parse(t *testing.T, c *api.Client, f string) *api.Job {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, f))
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasSuffix(f, ".json") {
		var wrap struct{ Job *api.Job }
		if err := json.Unmarshal(b, &wrap); err != nil || wrap.Job == nil {
			t.Fatalf("%s: %v", f, err)
		}
		id := *wrap.Job.ID + "-json"
		wrap.Job.ID, wrap.Job.Name = &id, &id
		return wrap.Job
	}
	job, err := c.Jobs().ParseHCL(string(b), true)
	if err != nil {
		t.Fatalf("parse %s: %v", f, err)
	}
	return job
}

// running waits for n running allocations of the job.
func running(n int) check {
	return func(t *testing.T, c *api.Client, job *api.Job) {
		testagent.WaitFor(t, examplesTimeout, *job.ID+" running", func() bool {
			return len(allocsIn(c, *job.ID, "running")) >= n
		})
	}
}

// allocsIn returns the job's allocations whose client status is status.
func allocsIn(c *api.Client, job, status string) []*api.AllocationListStub {
	list, _, err := c.Jobs().Allocations(job, false, nil)
	if err != nil {
		return nil
	}
	var out []*api.AllocationListStub
	for _, a := range list {
		if a.ClientStatus == status {
			out = append(out, a)
		}
	}
	return out
}

// completeOK waits until job's allocation completed with every task
// exiting 0, and returns it; a failed one fails the test at once.
func completeOK(t *testing.T, c *api.Client, job string) *api.AllocationListStub {
	t.Helper()
	var done *api.AllocationListStub
	testagent.WaitFor(t, examplesTimeout, job+" complete", func() bool {
		if failed := allocsIn(c, job, "failed"); len(failed) > 0 {
			t.Fatalf("%s failed: %+v", job, failed[0].TaskStates)
		}
		if list := allocsIn(c, job, "complete"); len(list) > 0 {
			done = list[0]
			return true
		}
		return false
	})
	for name, ts := range done.TaskStates {
		if ts.Failed {
			t.Fatalf("%s: task %s failed: %+v", job, name, ts.Events)
		}
		for _, ev := range ts.Events {
			if ev.Type == "Terminated" && ev.ExitCode != 0 {
				t.Fatalf("%s: task %s exited %d", job, name, ev.ExitCode)
			}
		}
	}
	return done
}

func logs(t *testing.T, c *api.Client, allocID, task string) string {
	t.Helper()
	a, _, err := c.Allocations().Info(allocID, nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := c.AllocFS().Cat(a, "alloc/logs/"+task+".stdout", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	b, _ := io.ReadAll(r)
	return string(b)
}

// periodicComplete forces the periodic job's launch; the child completes.
func periodicComplete(t *testing.T, c *api.Client, job *api.Job) {
	if _, _, err := c.Jobs().PeriodicForce(*job.ID, nil); err != nil {
		t.Fatal(err)
	}
	var child string
	testagent.WaitFor(t, examplesTimeout, "the periodic child", func() bool {
		list, _, err := c.Jobs().PrefixList(*job.ID + "/periodic-")
		if err != nil || len(list) == 0 {
			return false
		}
		child = list[0].ID
		return true
	})
	a := completeOK(t, c, child)
	if got := logs(t, c, a.ID, "report"); got != "report for "+child+"\n" && !strings.HasPrefix(got, "report for report") {
		t.Fatalf("report log %q", got)
	}
}

// dispatchComplete dispatches the parameterized sysbatch job with its
// required meta; the child runs once on the node and completes, its
// ${NOMAD_META_dir} and ${node.unique.name} interpolated.
func dispatchComplete(t *testing.T, c *api.Client, job *api.Job) {
	resp, _, err := c.Jobs().Dispatch(*job.ID, map[string]string{"dir": "/var/cache/app"}, nil, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	a := completeOK(t, c, resp.DispatchedJobID)
	nodes, _, err := c.Nodes().List(nil)
	if err != nil || len(nodes) != 1 {
		t.Fatal(nodes, err)
	}
	if got, want := logs(t, c, a.ID, "clean"), "cleaning /var/cache/app on "+nodes[0].Name+"\n"; got != want {
		t.Fatalf("clean log %q, want %q", got, want)
	}
}

// templateRunning writes the variable the template example reads, then
// waits for the task to run with the rendered file.
func templateRunning(t *testing.T, c *api.Client, job *api.Job) {
	testagent.WaitFor(t, examplesTimeout, "the variable written (once the first root key exists)", func() bool {
		_, _, err := c.Variables().Create(&api.Variable{Path: "nomad/jobs/greeter",
			Items: api.VariableItems{"greeting": "hello", "name": "ordo"}}, nil)
		return err == nil
	})
	running(1)(t, c, job)
	a := allocsIn(c, *job.ID, "running")[0]
	testagent.WaitFor(t, examplesTimeout, "the greeting", func() bool {
		l := logs(t, c, a.ID, "greet")
		return strings.Contains(l, "hello, ordo from greet") && strings.Contains(l, "as ordo")
	})
}
