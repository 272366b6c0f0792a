// This file runs docker jobs end to end: a dev agent whose client
// offers the docker driver, pointed at a dockerd the tests start for
// themselves (client/driver/docker/dockertest), places a job, runs its
// container with the job's ports, serves on loopback, writes its logs
// where `ordo alloc logs` reads them, restarts a container killed behind
// the client's back, and removes containers when the job stops. A
// variable's value a template renders into secrets/ stays out of the
// container's labels, the log and the Kafka mirror (kfake).

package client

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"

	"github.com/ordoplane/ordo/client"
	"github.com/ordoplane/ordo/client/driver"
	"github.com/ordoplane/ordo/client/driver/docker"
	"github.com/ordoplane/ordo/cmd/agent"
	"github.com/ordoplane/ordo/test/testagent"
)

// dockerTimeout bounds each wait on the dev agent.
const dockerTimeout = 30 * time.Second

// dockerWebJob is busybox httpd serving its local/ directory on the group's
// http port, in the host's network namespace.
const dockerWebJob = `job "web" {
  datacenters = ["dc1"]
  group "web" {
    network {
      port "http" {}
    }
    restart {
      attempts = 3
      interval = "1m"
      delay    = "100ms"
      mode     = "fail"
    }
    task "httpd" {
      driver         = "docker"
      kill_timeout   = "2s"
      shutdown_delay = "1m"
      config {
        image        = %q
        command      = "/bin/sh"
        args         = ["-c", "echo hello from $NOMAD_ALLOC_ID > $NOMAD_TASK_DIR/index.html; echo serving on $NOMAD_PORT_http; exec httpd -f -p $NOMAD_PORT_http -h /local"]
        network_mode = "host"
        ports        = ["http"]
        init         = true
        labels {
          team = "web"
        }
      }
      resources {
        cpu        = 100
        memory     = 64
        memory_max = 128
      }
    }
  }
}`

// TestDockerJob: a docker job on a dev agent is placed, runs, answers on
// its port, logs where the logs API reads, is restarted by its policy
// when its container is killed behind the client's back, and its
// container is removed when the job stops.
func TestDockerJob(t *testing.T) {
	t.Parallel()
	cfg := testagent.DevConfig(t.TempDir())
	cfg.Client = agent.DevClientConfig()
	cfg.Client.Drivers = []string{"exec", docker.Name}
	cfg.Client.Docker = agent.DockerConfig{Endpoint: dockerd(t).Endpoint}
	_, c := testagent.StartDev(t, cfg)
	testagent.WaitFor(t, dockerTimeout, "the dev node ready with a healthy docker driver", func() bool {
		nodes, _, err := c.Nodes().List(nil)
		if err != nil || len(nodes) != 1 || nodes[0].Status != "ready" {
			return false
		}
		d := nodes[0].Drivers[docker.Name]
		return d != nil && d.Healthy
	})

	job, err := c.Jobs().ParseHCL(fmt.Sprintf(dockerWebJob, dockerd(t).Image), true)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Jobs().Register(job, nil); err != nil {
		t.Fatal(err)
	}
	var alloc *api.Allocation
	testagent.WaitFor(t, dockerTimeout, "the allocation running", func() bool {
		list, _, err := c.Jobs().Allocations("web", false, nil)
		if err != nil || len(list) != 1 || list[0].ClientStatus != "running" {
			return false
		}
		alloc, _, err = c.Allocations().Info(list[0].ID, nil)
		return err == nil
	})
	port := 0
	for _, p := range alloc.AllocatedResources.Shared.Ports {
		if p.Label == "http" {
			port = p.Value
		}
	}
	if port == 0 {
		t.Fatalf("no http port in %+v", alloc.AllocatedResources.Shared)
	}
	url := fmt.Sprintf("http://127.0.0.1:%d/index.html", port)
	want := "hello from " + alloc.ID + "\n"
	testagent.WaitFor(t, dockerTimeout, "httpd answering on "+url, func() bool { return httpGetBody(url) == want })

	logs := c.Address() + "/v1/client/fs/logs/" + alloc.ID + "?task=httpd&type=stdout&plain=true&origin=start"
	testagent.WaitFor(t, dockerTimeout, "the container's stdout in the task's logs", func() bool {
		return strings.Contains(httpGetBody(logs), fmt.Sprintf("serving on %d", port))
	})

	ids := dockerd(t).Containers(t, docker.LabelAllocID, alloc.ID)
	if len(ids) != 1 {
		t.Fatalf("containers of the allocation = %v, want one", ids)
	}
	info := dockerd(t).Inspect(t, ids[0])
	labels, _ := info["Config"].(map[string]any)["Labels"].(map[string]any)
	if labels["team"] != "web" || labels[docker.LabelTaskName] != "httpd" {
		t.Errorf("container labels = %v", labels)
	}
	host, _ := info["HostConfig"].(map[string]any)
	// memory_max is the hard limit, memory the reservation.
	if host["NetworkMode"] != "host" || host["Memory"] != float64(128<<20) || host["MemoryReservation"] != float64(64<<20) ||
		host["CpuShares"] != float64(100) {
		t.Errorf("host config: network %v, memory %v, reservation %v, cpu shares %v",
			host["NetworkMode"], host["Memory"], host["MemoryReservation"], host["CpuShares"])
	}

	// Killed behind the client's back: the restart policy starts a new
	// container, and only one runs.
	dockerd(t).Kill(t, ids[0])
	testagent.WaitFor(t, dockerTimeout, "the task restarted in a new container", func() bool {
		a, _, err := c.Allocations().Info(alloc.ID, nil)
		if err != nil || a.TaskStates["httpd"] == nil || a.TaskStates["httpd"].Restarts < 1 || a.TaskStates["httpd"].State != "running" {
			return false
		}
		now := dockerd(t).Containers(t, docker.LabelAllocID, alloc.ID)
		return len(now) == 1 && now[0] != ids[0] && httpGetBody(url) == want
	})

	// job stop -no-shutdown-delay: the minute's delay is skipped.
	if _, _, err := c.Jobs().DeregisterOpts("web", &api.DeregisterOptions{NoShutdownDelay: true}, nil); err != nil {
		t.Fatal(err)
	}
	testagent.WaitFor(t, dockerTimeout, "the container removed once the job stopped", func() bool {
		return len(dockerd(t).Containers(t, docker.LabelAllocID, alloc.ID)) == 0
	})
}

// TestDockerUnhealthyInfeasible: a client whose docker daemon does not
// answer reports the driver unhealthy, and a docker job is not placed on
// it, for missing drivers.
func TestDockerUnhealthyInfeasible(t *testing.T) {
	t.Parallel()
	cfg := testagent.DevConfig(t.TempDir())
	cfg.Client = agent.DevClientConfig()
	cfg.Client.Drivers = []string{"exec", docker.Name}
	cfg.Client.Docker = agent.DockerConfig{Endpoint: "unix://" + t.TempDir() + "/no-docker.sock"}
	_, c := testagent.StartDev(t, cfg)
	testagent.WaitFor(t, dockerTimeout, "the dev node ready", func() bool {
		nodes, _, err := c.Nodes().List(nil)
		return err == nil && len(nodes) == 1 && nodes[0].Status == "ready"
	})
	nodes, _, _ := c.Nodes().List(nil)
	if d := nodes[0].Drivers[docker.Name]; d == nil || d.Healthy {
		t.Fatalf("docker driver info = %+v, want unhealthy", d)
	}
	job, err := c.Jobs().ParseHCL(fmt.Sprintf(dockerWebJob, dockerd(t).Image), true)
	if err != nil {
		t.Fatal(err)
	}
	resp, _, err := c.Jobs().Register(job, nil)
	if err != nil {
		t.Fatal(err)
	}
	testagent.WaitFor(t, dockerTimeout, "a placement failure for missing drivers", func() bool {
		ev, _, err := c.Evaluations().Info(resp.EvalID, nil)
		if err != nil || ev.Status != "complete" {
			return false
		}
		for _, m := range ev.FailedTGAllocs {
			if m.ConstraintFiltered["missing drivers"] > 0 {
				return true
			}
		}
		return false
	})
}

// httpGetBody returns the body of a 200 answer to url, "" otherwise.
func httpGetBody(url string) string {
	resp, err := http.Get(url)
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

// sleeperJob is a long-running container that says when it started.
const sleeperJob = `job "sleeper" {
  datacenters = ["dc1"]
  group "s" {
    task "sleep" {
      driver       = "docker"
      kill_timeout = "2s"
      config {
        image   = %q
        command = "/bin/sh"
        args    = ["-c", "echo started; exec sleep 600"]
        init    = true
      }
      resources {
        cpu    = 100
        memory = 32
      }
    }
  }
}`

// TestClientRestartReattaches: a client process that stops leaves its
// container running; the next one on the same data directory re-attaches
// to it, starts nothing, and stops it when the job stops.
func TestClientRestartReattaches(t *testing.T) {
	t.Parallel()
	a, c := testagent.StartDev(t, testagent.DevConfig(t.TempDir()))
	dataDir := t.TempDir()
	startClient := func() (stop func()) {
		d, err := docker.New(docker.Config{Endpoint: dockerd(t).Endpoint, Logger: testagent.Discard()})
		if err != nil {
			t.Fatal(err)
		}
		cl, err := client.New(client.Config{DataDir: dataDir, Servers: []string{a.HTTPAddr()}, NodeName: "docker-1",
			Drivers: []driver.Driver{d}, NetworkAddress: "127.0.0.1", Logger: testagent.Discard()})
		if err != nil {
			t.Fatal(err)
		}
		stopRun := testagent.Run(t, "client", cl.Run)
		return func() { stopRun(); d.Close() }
	}
	stop := startClient()
	job, err := c.Jobs().ParseHCL(fmt.Sprintf(sleeperJob, dockerd(t).Image), true)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Jobs().Register(job, nil); err != nil {
		t.Fatal(err)
	}
	var allocID string
	testagent.WaitFor(t, dockerTimeout, "the allocation running", func() bool {
		list, _, err := c.Jobs().Allocations("sleeper", false, nil)
		if err != nil || len(list) != 1 || list[0].ClientStatus != "running" {
			return false
		}
		allocID = list[0].ID
		return true
	})
	before := dockerd(t).Containers(t, docker.LabelAllocID, allocID)
	if len(before) != 1 {
		t.Fatalf("containers = %v, want one", before)
	}

	stop()
	if info := dockerd(t).Inspect(t, before[0]); info == nil || !info["State"].(map[string]any)["Running"].(bool) {
		t.Fatal("the container did not outlive the client process")
	}
	startClient()
	// The new client process has re-attached once it reports the task's
	// state again; then the job's stop must reach the same container.
	testagent.WaitFor(t, dockerTimeout, "the node ready again", func() bool {
		nodes, _, err := c.Nodes().List(nil)
		return err == nil && len(nodes) == 1 && nodes[0].Status == "ready"
	})
	a2, _, err := c.Allocations().Info(allocID, nil)
	if err != nil {
		t.Fatal(err)
	}
	ts := a2.TaskStates["sleep"]
	if ts == nil || ts.State != "running" || ts.Restarts != 0 {
		t.Fatalf("task state after the restart = %+v", ts)
	}
	if now := dockerd(t).Containers(t, docker.LabelAllocID, allocID); len(now) != 1 || now[0] != before[0] {
		t.Fatalf("containers after the client restart = %v, want the same one %v", now, before)
	}
	if _, _, err := c.Jobs().Deregister("sleeper", false, nil); err != nil {
		t.Fatal(err)
	}
	testagent.WaitFor(t, dockerTimeout, "the container stopped and removed by the new client process", func() bool {
		return len(dockerd(t).Containers(t, docker.LabelAllocID, allocID)) == 0
	})
	// Read again after the stop: the new client process's report of the
	// task shows whatever it did since the restart.
	a3, _, err := c.Allocations().Info(allocID, nil)
	if err != nil {
		t.Fatal(err)
	}
	ts = a3.TaskStates["sleep"]
	if ts.Restarts != 0 {
		t.Errorf("restarts = %d, want 0", ts.Restarts)
	}
	started := 0
	for _, e := range ts.Events {
		if e.Type == "Started" {
			started++
		}
	}
	if started != 1 {
		t.Errorf("%d Started events, want 1: %+v", started, ts.Events)
	}
}

// TestClientSweepsUnknownContainers: a client that comes back with no
// record of an allocation (its state lost) removes that allocation's
// container, found by its labels, instead of leaving it running.
func TestClientSweepsUnknownContainers(t *testing.T) {
	t.Parallel()
	a, c := testagent.StartDev(t, testagent.DevConfig(t.TempDir()))
	dataDir := t.TempDir()
	startClient := func() (stop func()) {
		d, err := docker.New(docker.Config{Endpoint: dockerd(t).Endpoint, Owner: dataDir, Logger: testagent.Discard()})
		if err != nil {
			t.Fatal(err)
		}
		cl, err := client.New(client.Config{DataDir: dataDir, Servers: []string{a.HTTPAddr()}, NodeName: "docker-sweep",
			Drivers: []driver.Driver{d}, NetworkAddress: "127.0.0.1", Logger: testagent.Discard()})
		if err != nil {
			t.Fatal(err)
		}
		stopRun := testagent.Run(t, "client", cl.Run)
		return func() { stopRun(); d.Close() }
	}
	stop := startClient()
	job, err := c.Jobs().ParseHCL(fmt.Sprintf(sleeperJob, dockerd(t).Image), true)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Jobs().Register(job, nil); err != nil {
		t.Fatal(err)
	}
	var allocID string
	testagent.WaitFor(t, dockerTimeout, "the allocation running", func() bool {
		list, _, err := c.Jobs().Allocations("sleeper", false, nil)
		if err != nil || len(list) != 1 || list[0].ClientStatus != "running" {
			return false
		}
		allocID = list[0].ID
		return true
	})
	if ids := dockerd(t).Containers(t, docker.LabelAllocID, allocID); len(ids) != 1 {
		t.Fatalf("containers = %v, want one", ids)
	}
	stop()
	// The client's state is lost: it comes back as a new node with no
	// allocation record.
	entries, err := os.ReadDir(dataDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if err := os.RemoveAll(filepath.Join(dataDir, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	startClient()
	testagent.WaitFor(t, dockerTimeout, "the unknown allocation's container removed", func() bool {
		return len(dockerd(t).Containers(t, docker.LabelAllocID, allocID)) == 0
	})
}

// oomJob is a batch task that reads 64 MB into memory under a 16 MB
// limit.
const oomJob = `job "oom" {
  datacenters = ["dc1"]
  type        = "batch"
  group "g" {
    restart {
      attempts = 0
      mode     = "fail"
    }
    reschedule {
      attempts  = 0
      unlimited = false
    }
    task "hog" {
      driver = "docker"
      config {
        image   = %q
        command = "/bin/dd"
        args    = ["if=/dev/zero", "of=/dev/null", "bs=64M", "count=1"]
      }
      resources {
        cpu    = 100
        memory = 16
      }
    }
  }
}`

// TestMemoryLimitOOM: the daemon enforces a docker task's memory: a task
// over its limit is killed, and its Terminated event says OOM.
func TestMemoryLimitOOM(t *testing.T) {
	// Not in parallel: dockerd marks an OOM kill from an event of its own
	// that can land after the exit a waiter sees, more often under load.
	cfg := testagent.DevConfig(t.TempDir())
	cfg.Client = agent.DevClientConfig()
	cfg.Client.Drivers = []string{docker.Name}
	cfg.Client.Docker = agent.DockerConfig{Endpoint: dockerd(t).Endpoint}
	_, c := testagent.StartDev(t, cfg)
	job, err := c.Jobs().ParseHCL(fmt.Sprintf(oomJob, dockerd(t).Image), true)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Jobs().Register(job, nil); err != nil {
		t.Fatal(err)
	}
	var msg string
	testagent.WaitFor(t, dockerTimeout, "the task terminated", func() bool {
		list, _, err := c.Jobs().Allocations("oom", false, nil)
		if err != nil || len(list) != 1 || list[0].ClientStatus != "failed" {
			return false
		}
		for _, e := range list[0].TaskStates["hog"].Events {
			if e.Type == "Terminated" {
				msg = e.Message
				return true
			}
		}
		return false
	})
	if !strings.Contains(msg, "OOM Killed") {
		t.Fatalf("Terminated event = %q, want it to say OOM Killed", msg)
	}
}

// proxy forwards a unix socket of the test's to the daemon's, so the test
// can make the daemon appear and vanish for a client.
type proxy struct {
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
	wg    sync.WaitGroup
}

func startProxy(t *testing.T, path string) *proxy {
	t.Helper()
	os.Remove(path) // the socket of an earlier proxy
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln}
	target := strings.TrimPrefix(dockerd(t).Endpoint, "unix://")
	p.wg.Go(func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("unix", target)
			if err != nil {
				in.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, in, out)
			p.mu.Unlock()
			p.wg.Go(func() { io.Copy(out, in); out.Close() })
			p.wg.Go(func() { io.Copy(in, out); in.Close() })
		}
	})
	t.Cleanup(p.stop)
	return p
}

// stop closes the socket and every connection through it.
func (p *proxy) stop() {
	p.ln.Close()
	p.mu.Lock()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
	p.mu.Unlock()
	p.wg.Wait()
}

// TestDriverHealthFollowsDaemon: a client whose daemon is not there yet
// registers docker unhealthy; once the daemon answers, the node says
// healthy and a docker job is placed; once it goes, unhealthy again.
func TestDriverHealthFollowsDaemon(t *testing.T) {
	t.Parallel()
	a, c := testagent.StartDev(t, testagent.DevConfig(t.TempDir()))
	sock := filepath.Join(t.TempDir(), "docker.sock")
	d, err := docker.New(docker.Config{Endpoint: "unix://" + sock, Logger: testagent.Discard()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	cl, err := client.New(client.Config{DataDir: t.TempDir(), Servers: []string{a.HTTPAddr()}, NodeName: "docker-later",
		Drivers: []driver.Driver{d}, NetworkAddress: "127.0.0.1", DriverFingerprintInterval: 50 * time.Millisecond,
		DestroyOnShutdown: true, Logger: testagent.Discard()})
	if err != nil {
		t.Fatal(err)
	}
	testagent.Run(t, "client", cl.Run)
	dockerHealthy := func() (bool, bool) {
		nodes, _, err := c.Nodes().List(nil)
		if err != nil || len(nodes) != 1 || nodes[0].Status != "ready" || nodes[0].Drivers[docker.Name] == nil {
			return false, false
		}
		return true, nodes[0].Drivers[docker.Name].Healthy
	}
	testagent.WaitFor(t, dockerTimeout, "the node ready, docker unhealthy", func() bool {
		ok, healthy := dockerHealthy()
		return ok && !healthy
	})
	p := startProxy(t, sock)
	testagent.WaitFor(t, dockerTimeout, "docker healthy once the daemon answers", func() bool {
		ok, healthy := dockerHealthy()
		return ok && healthy
	})
	job, err := c.Jobs().ParseHCL(fmt.Sprintf(sleeperJob, dockerd(t).Image), true)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Jobs().Register(job, nil); err != nil {
		t.Fatal(err)
	}
	testagent.WaitFor(t, dockerTimeout, "the docker job running", func() bool {
		list, _, err := c.Jobs().Allocations("sleeper", false, nil)
		return err == nil && len(list) == 1 && list[0].ClientStatus == "running"
	})
	p.stop()
	testagent.WaitFor(t, dockerTimeout, "docker unhealthy once the daemon is gone", func() bool {
		ok, healthy := dockerHealthy()
		return ok && !healthy
	})
	// Back: the node is healthy again, and the task's container can be
	// stopped through it.
	startProxy(t, sock)
	testagent.WaitFor(t, dockerTimeout, "docker healthy again", func() bool {
		ok, healthy := dockerHealthy()
		return ok && healthy
	})
	if _, _, err := c.Jobs().Deregister("sleeper", false, nil); err != nil {
		t.Fatal(err)
	}
	testagent.WaitFor(t, dockerTimeout, "the job's allocation stopped", func() bool {
		list, _, err := c.Jobs().Allocations("sleeper", false, nil)
		return err == nil && len(list) == 1 && list[0].ClientStatus == "complete"
	})
}
