// This file holds the end-to-end test of a real Nomad service on a
// dev agent's client: a task serving HTTP on its dynamic port, found
// through Nomad-native service discovery, judged healthy by its check, and
// read by another job's templates, which re-render when the service's
// instances or a variable change.

package client

import (
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"

	"github.com/ordoplane/ordo/cmd/agent"
	"github.com/ordoplane/ordo/test/testagent"
)

// serveEnv makes this test binary, run as a task, the HTTP server of the
// "web" job instead of running tests.
const serveEnv = "ORDO_WORKLOAD_SERVE"

// serve listens on NOMAD_IP_http:NOMAD_PORT_http: / answers the alloc id,
// /health answers 200 once the file $HEALTH_FILE exists and 503 before.
func serve() {
	addr := net.JoinHostPort(os.Getenv("NOMAD_IP_http"), os.Getenv("NOMAD_PORT_http"))
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintf(w, "hello from %s\n", os.Getenv("NOMAD_ALLOC_ID"))
	})
	mux.HandleFunc("/health", func(w http.ResponseWriter, _ *http.Request) {
		if _, err := os.Stat(os.Getenv("HEALTH_FILE")); err != nil {
			http.Error(w, "not yet", http.StatusServiceUnavailable)
			return
		}
		io.WriteString(w, "ok\n")
	})
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	go http.Serve(ln, mux)
	<-stop
}

// workloadTimeout bounds each wait on the dev client.
const workloadTimeout = 30 * time.Second

func run(t *testing.T, c *api.Client, src string) {
	t.Helper()
	job, err := c.Jobs().ParseHCL(src, true)
	if err != nil {
		t.Fatalf("parse: %v\n%s", err, src)
	}
	if _, _, err := c.Jobs().Register(job, nil); err != nil {
		t.Fatalf("register %s: %v", *job.ID, err)
	}
}

// runningAllocs returns the job's allocations whose client status is
// running.
func runningAllocs(c *api.Client, job string) []*api.AllocationListStub {
	list, _, err := c.Jobs().Allocations(job, false, nil)
	if err != nil {
		return nil
	}
	var out []*api.AllocationListStub
	for _, a := range list {
		if a.ClientStatus == "running" && a.DesiredStatus == "run" {
			out = append(out, a)
		}
	}
	return out
}

// cat reads a file of an allocation through the server's client fs
// route. (The nomad/api AllocFS client dials the node with a new
// transport on every call; polled, it would leave idle connections past
// the agent's per-client limit.)
func cat(c *api.Client, allocID, path string) string {
	resp, err := http.Get(c.Address() + "/v1/client/fs/cat/" + allocID + "?path=" + url.QueryEscape(path))
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return ""
	}
	return string(b)
}

const workloadWebJob = `job "web" {
  datacenters = ["dc1"]
  group "web" {
    count = %d
    network {
      port "http" {}
    }
    update {
      min_healthy_time = "1s"
      healthy_deadline = "1m"
    }
    service {
      name = "web"
      port = "http"
      tags = ["v1"]
      check {
        type     = "http"
        path     = "/health"
        interval = "1s"
        timeout  = "1s"
      }
    }
    task "server" {
      driver = "exec"
      config {
        command = %q
      }
      env {
        ORDO_WORKLOAD_SERVE = "1"
        HEALTH_FILE         = %q
      }
      resources {
        cpu    = 100
        memory = 64
      }
    }
  }
}`

const readerJob = `job "reader" {
  datacenters = ["dc1"]
  group "r" {
    task "t" {
      driver = "exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "trap 'echo got-hup >> $NOMAD_ALLOC_DIR/hups' HUP; while true; do sleep 0.2; done"]
      }
      template {
        data        = <<EOT
{{ range nomadService "web" }}{{ .Address }}:{{ .Port }}
{{ end -}}
EOT
        destination = "local/web.txt"
        change_mode = "restart"
      }
      template {
        data          = "{{ with nomadVar \"nomad/jobs/reader\" }}{{ .greeting }}{{ end }}"
        destination   = "local/greeting.txt"
        change_mode   = "signal"
        change_signal = "SIGHUP"
      }
      resources {
        cpu    = 100
        memory = 64
      }
    }
  }
}`

// TestServiceCheckTemplate runs a web service and a job whose templates
// read it and a variable, on a dev agent's client with real processes.
func TestServiceCheckTemplate(t *testing.T) {
	t.Parallel()
	_, c, _ := testagent.StartDevClient(t, func(cfg *agent.Config) { cfg.Logger = slog.New(slog.DiscardHandler) })
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	healthFile := t.TempDir() + "/healthy"
	run(t, c, fmt.Sprintf(workloadWebJob, 1, self, healthFile))

	// The task listens on its dynamic port; its service instance is
	// registered at that address; the check fails until /health does not.
	var reg *api.ServiceRegistration
	testagent.WaitFor(t, workloadTimeout, "web's instance registered", func() bool {
		regs, _, err := c.Services().Get("web", nil)
		if err != nil || len(regs) != 1 {
			return false
		}
		reg = regs[0]
		return true
	})
	allocs := runningAllocs(c, "web")
	if len(allocs) != 1 || reg.AllocID != allocs[0].ID {
		t.Fatalf("registration %+v is not of the running allocation %+v", reg, allocs)
	}
	a, _, err := c.Allocations().Info(reg.AllocID, nil)
	if err != nil {
		t.Fatal(err)
	}
	ports := a.AllocatedResources.Shared.Ports
	if len(ports) != 1 || ports[0].Label != "http" || ports[0].Value != reg.Port || ports[0].HostIP != reg.Address ||
		reg.Port < 20000 || reg.Port > 32000 {
		t.Fatalf("ports %+v, registration %s:%d", ports, reg.Address, reg.Port)
	}
	// The instance is registered once the task runs, which may be before
	// it listens.
	want := "hello from " + reg.AllocID
	testagent.WaitFor(t, workloadTimeout, "the task to serve on its port", func() bool {
		resp, err := http.Get(fmt.Sprintf("http://%s/", net.JoinHostPort(reg.Address, fmt.Sprint(reg.Port))))
		if err != nil {
			return false
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return strings.Contains(string(body), want)
	})

	// Unhealthy while the check fails: the deployment waits.
	testagent.WaitFor(t, workloadTimeout, "the check to be critical", func() bool {
		regs, _, err := c.Services().Get("web", nil)
		return err == nil && len(regs) == 1 && checkStatus(t, c, regs[0].ID) == "critical"
	})
	a, _, _ = c.Allocations().Info(reg.AllocID, nil)
	if a.DeploymentStatus != nil && a.DeploymentStatus.Healthy != nil {
		t.Fatalf("allocation health set while its check fails: %+v", a.DeploymentStatus)
	}
	if err := os.WriteFile(healthFile, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	testagent.WaitFor(t, workloadTimeout, "the deployment to succeed once the check passes", func() bool {
		d, _, err := c.Jobs().LatestDeployment("web", nil)
		return err == nil && d != nil && d.Status == "successful"
	})

	// The reader's templates render the service's address and the variable.
	if _, _, err := c.Variables().Create(&api.Variable{Path: "nomad/jobs/reader",
		Items: api.VariableItems{"greeting": "hello"}}, nil); err != nil {
		t.Fatal(err)
	}
	run(t, c, readerJob)
	var reader string
	testagent.WaitFor(t, workloadTimeout, "the reader running with its templates", func() bool {
		r := runningAllocs(c, "reader")
		if len(r) != 1 {
			return false
		}
		reader = r[0].ID
		return cat(c, reader, "t/local/web.txt") == fmt.Sprintf("%s:%d\n", reg.Address, reg.Port) &&
			cat(c, reader, "t/local/greeting.txt") == "hello"
	})

	// Scaling web re-renders web.txt: the reader restarts (change_mode restart).
	run(t, c, fmt.Sprintf(workloadWebJob, 2, self, healthFile))
	testagent.WaitFor(t, workloadTimeout, "web.txt with two instances and the reader restarted", func() bool {
		lines := strings.Count(cat(c, reader, "t/local/web.txt"), "\n")
		return lines == 2 && restarts(c, reader, "t") == 1
	})

	// A variable change re-renders greeting.txt: the reader gets SIGHUP
	// and is not restarted (change_mode signal).
	v, _, err := c.Variables().Read("nomad/jobs/reader", nil)
	if err != nil {
		t.Fatal(err)
	}
	v.Items["greeting"] = "bonjour"
	if _, _, err := c.Variables().Update(v, nil); err != nil {
		t.Fatal(err)
	}
	testagent.WaitFor(t, workloadTimeout, "greeting.txt re-rendered and the reader signalled", func() bool {
		return cat(c, reader, "t/local/greeting.txt") == "bonjour" &&
			strings.Contains(cat(c, reader, "alloc/hups"), "got-hup")
	})
	if n := restarts(c, reader, "t"); n != 1 {
		t.Fatalf("the reader restarted %d times, want 1 (a signal is not a restart)", n)
	}

	// Stopping web removes its instances.
	if _, _, err := c.Jobs().Deregister("web", false, nil); err != nil {
		t.Fatal(err)
	}
	testagent.WaitFor(t, workloadTimeout, "web's instances deregistered", func() bool {
		regs, _, err := c.Services().Get("web", nil)
		return err == nil && len(regs) == 0
	})
}

func restarts(c *api.Client, allocID, task string) uint64 {
	a, _, err := c.Allocations().Info(allocID, nil)
	if err != nil || a.TaskStates[task] == nil {
		return 0
	}
	return a.TaskStates[task].Restarts
}

// checkStatus returns the status of the first check of registration id,
// as ordo's service API reports it (Nomad's api type has no checks).
func checkStatus(t *testing.T, c *api.Client, id string) string {
	var regs []struct {
		ID     string
		Checks []struct{ Status string }
	}
	if _, err := c.Raw().Query("/v1/service/web", &regs, nil); err != nil {
		return ""
	}
	for _, r := range regs {
		if r.ID == id && len(r.Checks) > 0 {
			return r.Checks[0].Status
		}
	}
	return ""
}
