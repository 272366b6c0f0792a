package client_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"golang.org/x/sys/unix"

	"github.com/ordoplane/ordo/client"
	"github.com/ordoplane/ordo/client/driver"
	"github.com/ordoplane/ordo/client/driver/exec"
	clienthttp "github.com/ordoplane/ordo/client/httpapi"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/test/testagent"
)

// syncBuffer is a log destination safe for concurrent writes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// records returns the JSON log records written so far.
func (b *syncBuffer) records() []map[string]any {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []map[string]any
	for line := range strings.Lines(b.buf.String()) {
		var r map[string]any
		if json.Unmarshal([]byte(line), &r) == nil {
			out = append(out, r)
		}
	}
	return out
}

// sleepJob is a service job of one exec task running /bin/sleep with
// SIGTERM ignored, so that a kill takes its whole kill timeout.
func sleepJob(id string, killTimeout time.Duration) *api.Job {
	job := api.NewServiceJob(id, id, "global", 50)
	job.Datacenters = []string{"dc1"}
	tg := api.NewTaskGroup("g", 1)
	task := api.NewTask("sleep", "exec").SetConfig("command", "/bin/sh").
		SetConfig("args", []string{"-c", "trap '' TERM; exec /bin/sleep 300"})
	task.KillTimeout = pointer(killTimeout)
	task.Require(&api.Resources{CPU: pointer(20), MemoryMB: pointer(16)})
	tg.AddTask(task)
	job.AddTaskGroup(tg)
	return job
}

// taskPid returns the pid of the running task of allocation id, 0 when
// it has none.
func taskPid(c *client.Client, id, task string) int {
	r, ok := c.Runner(id)
	if !ok {
		return 0
	}
	rec, ok := r.TaskRecord(task)
	if !ok || rec.Handle == nil {
		return 0
	}
	pid, _ := strconv.Atoi(rec.Handle.Data["pid"])
	return pid
}

// processGone reports whether no process has pid any more (not even a
// zombie).
func processGone(pid int) bool {
	return errors.Is(unix.Kill(pid, 0), unix.ESRCH)
}

// runSleepJob registers sleepJob id and returns its allocation's id and
// the pid of its process once it runs on c.
func runSleepJob(t *testing.T, nc *api.Client, c *client.Client, id string, killTimeout time.Duration) (string, int) {
	t.Helper()
	if _, _, err := nc.Jobs().Register(sleepJob(id, killTimeout), nil); err != nil {
		t.Fatal(err)
	}
	testagent.WaitFor(t, 20*time.Second, id+" running", allStatus(t, nc, id, 1, "running"))
	allocID := allocs(t, nc, id)[0].ID
	var pid int
	testagent.WaitFor(t, 10*time.Second, id+"'s pid", func() bool {
		pid = taskPid(c, allocID, "sleep")
		return pid > 0
	})
	if processGone(pid) {
		t.Fatalf("%s's process %d is not running", id, pid)
	}
	return allocID, pid
}

// assertDestroyed waits until allocation id is gone from the client:
// its process, its runner, its directory and its record.
func assertDestroyed(t *testing.T, c *client.Client, dataDir, id string, pid int) {
	t.Helper()
	testagent.WaitFor(t, 30*time.Second, "the orphaned task's process to be killed", func() bool { return processGone(pid) })
	testagent.WaitFor(t, 10*time.Second, "the client to drop the orphaned allocation", func() bool {
		_, ok := c.Runner(id)
		return !ok
	})
	for _, p := range []string{filepath.Join(dataDir, "alloc", id), filepath.Join(dataDir, "client", "allocs", id+".json")} {
		testagent.WaitFor(t, 10*time.Second, p+" to be removed", func() bool {
			_, err := os.Stat(p)
			return errors.Is(err, os.ErrNotExist)
		})
	}
}

// assertLogged fails unless the client logged that it destroyed
// allocation id of node.
func assertLogged(t *testing.T, logs *syncBuffer, node, id string) {
	t.Helper()
	for _, r := range logs.records() {
		if strings.HasPrefix(r["msg"].(string), "allocation no longer listed by the servers") &&
			r["alloc_id"] == id && r["node_id"] == node {
			return
		}
	}
	t.Errorf("no log record of destroying %s on node %s", id, node)
}

// After `ordo operator snapshot restore` of a state saved before a job
// ran, the client kills the job's task (a real process), records it in
// the task's events, logs it and removes the allocation: the restored
// servers no longer list it. The watch waits five minutes, so the client
// must be woken by the restore itself.
func TestClientDestroysAllocsARestoreRemoved(t *testing.T) {
	addr, nc := startServer(t)
	ed, err := exec.New(exec.Config{Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ed.Close() })
	dataDir := t.TempDir()
	logs := &syncBuffer{}
	c, _ := startClient(t, client.Config{DataDir: dataDir, Servers: []string{addr}, Drivers: []driver.Driver{ed},
		DestroyOnShutdown: true, WatchWait: 5 * time.Minute, Logger: slog.New(slog.NewJSONHandler(logs, nil))})
	waitNodeReady(t, nc, c.NodeID())
	file := testagent.SaveSnapshot(t, addr) // the node, and no job

	allocID, pid := runSleepJob(t, nc, c, "orphan", 5*time.Second)
	if status, body := testagent.RestoreSnapshot(t, addr, file); status != http.StatusOK {
		t.Fatalf("snapshot restore: %d: %s", status, body)
	}

	// SIGTERM is ignored: the task is being killed for its kill timeout,
	// and the client's own API shows why in its events meanwhile.
	capi, err := clienthttp.New(clienthttp.Config{Allocs: clienthttp.Runners(c.Runner), Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(capi)
	t.Cleanup(hs.Close)
	testagent.WaitFor(t, 20*time.Second, "the client's API to show a Killing event naming the servers' removal", func() bool {
		resp, err := http.Get(hs.URL + "/v1/client/allocation/" + allocID)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var u events.AllocClientUpdate
		if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&u) != nil || u.TaskStates["sleep"] == nil {
			return false
		}
		for _, e := range u.TaskStates["sleep"].Events {
			if e.Type == "Killing" && strings.Contains(e.Message, "removed by the servers") && strings.Contains(e.Message, c.NodeID()) {
				return true
			}
		}
		return false
	})
	assertDestroyed(t, c, dataDir, allocID, pid)
	resp, err := http.Get(hs.URL + "/v1/client/allocation/" + allocID)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("the client's API answers the destroyed allocation: %s", resp.Status)
	}
	assertLogged(t, logs, c.NodeID(), allocID)
	if list, _, err := nc.Allocations().List(nil); err != nil || len(list) != 0 {
		t.Fatalf("the servers list %d allocations after the restore (%v)", len(list), err)
	}
}

// A client restarted after a restore finds in its state directory an
// allocation the servers no longer list, its task still running: once it
// has synced with the servers it kills the task and removes the
// allocation, as a running client does.
func TestRestartedClientDestroysAllocsARestoreRemoved(t *testing.T) {
	addr, nc := startServer(t)
	// The first client's driver stays open: the task is its child, and
	// its waiter reaps the process once the second client has killed it.
	ed1, err := exec.New(exec.Config{Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ed1.Close() })
	dataDir := t.TempDir()
	c1, stop1 := startClient(t, client.Config{DataDir: dataDir, Servers: []string{addr}, Drivers: []driver.Driver{ed1}})
	waitNodeReady(t, nc, c1.NodeID())
	file := testagent.SaveSnapshot(t, addr)
	allocID, pid := runSleepJob(t, nc, c1, "orphan", time.Second)
	stop1() // leaves the task running
	if processGone(pid) {
		t.Fatal("the task died with its client")
	}

	if status, body := testagent.RestoreSnapshot(t, addr, file); status != http.StatusOK {
		t.Fatalf("snapshot restore: %d: %s", status, body)
	}
	ed2, err := exec.New(exec.Config{Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ed2.Close() })
	logs := &syncBuffer{}
	c2, _ := startClient(t, client.Config{DataDir: dataDir, Servers: []string{addr}, Drivers: []driver.Driver{ed2},
		DestroyOnShutdown: true, WatchWait: 5 * time.Minute, Logger: slog.New(slog.NewJSONHandler(logs, nil))})
	if c2.NodeID() != c1.NodeID() {
		t.Fatalf("the restarted client is node %s, was %s", c2.NodeID(), c1.NodeID())
	}
	assertDestroyed(t, c2, dataDir, allocID, pid)
	assertLogged(t, logs, c2.NodeID(), allocID)
}
