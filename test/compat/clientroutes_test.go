package compat

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"

	ordoapi "github.com/ordoplane/ordo/api"
	"github.com/ordoplane/ordo/cmd/agent"
	"github.com/ordoplane/ordo/test/testagent"
)

// clientTimeout bounds each wait for the dev client (a task starting,
// restarting, its state reaching the servers).
const clientTimeout = 30 * time.Second

// startDevClient starts a dev agent that runs a client with the exec
// driver, as `ordo agent -dev` does, and waits for its node to be ready.
// edit, when given, changes its configuration first.
func startDevClient(t *testing.T, edit ...func(*agent.Config)) (*agent.Agent, *api.Client, string) {
	t.Helper()
	return testagent.StartDevClient(t, append(edit, func(cfg *agent.Config) {
		cfg.Client.NodeName = "dev-node"
		cfg.Logger = slog.New(slog.DiscardHandler)
	})...)
}

// shellJob is a job of one group "g" with one exec task "web" running
// script with /bin/sh.
func shellJob(kind, id, script string) *api.Job {
	j := testagent.SleepJob(kind, id, 1, 100)
	j.TaskGroups[0].Name = new("g")
	j.TaskGroups[0].Tasks[0].Name = "web"
	j.TaskGroups[0].Tasks[0].Config = map[string]any{"command": "/bin/sh", "args": []string{"-c", script}}
	if kind == "batch" {
		j.TaskGroups[0].RestartPolicy = &api.RestartPolicy{Attempts: new(0), Mode: new("fail")}
	}
	return j
}

// runningAlloc waits for job's allocation to run and returns it as
// Allocations().Info answers it.
func runningAlloc(t *testing.T, c *api.Client, job string) *api.Allocation {
	t.Helper()
	var alloc *api.Allocation
	testagent.WaitFor(t, clientTimeout, job+"'s allocation running", func() bool {
		list, _, err := c.Jobs().Allocations(job, false, nil)
		if err != nil || len(list) != 1 || list[0].ClientStatus != "running" {
			return false
		}
		alloc, _, err = c.Allocations().Info(list[0].ID, nil)
		return err == nil
	})
	return alloc
}

// The routes the client agent serves, driven by the nomad/api client
// (which reaches the node directly for files and exec, through the
// server for the rest) and through the server's proxy.
func TestClientRoutesWithNomadClient(t *testing.T) {
	a, c, nodeID := startDevClient(t)
	server := "http://" + a.HTTPAddr()
	script := `echo started > local/marker; ln -s / local/root; trap 'echo got-hup' HUP; while true; do sleep 0.1; done`
	testagent.Register(t, c, shellJob("service", "web", script))
	alloc := runningAlloc(t, c, "web")

	// The allocation embeds its job, as Nomad's.
	if alloc.Job == nil || *alloc.Job.ID != "web" || alloc.Job.LookupTaskGroup("g") == nil {
		t.Fatalf("Allocations().Info: Job = %+v", alloc.Job)
	}
	onNode, _, err := c.Nodes().Allocations(nodeID, nil)
	if err != nil || len(onNode) != 1 || onNode[0].Job == nil || *onNode[0].Job.ID != "web" {
		t.Fatalf("Nodes().Allocations = %+v, %v", onNode, err)
	}

	// Files.
	testagent.WaitFor(t, clientTimeout, "the task's marker file", func() bool {
		_, _, err := c.AllocFS().Stat(alloc, "web/local/marker", nil)
		return err == nil
	})
	root, _, err := c.AllocFS().List(alloc, "/", nil)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, f := range root {
		names[f.Name] = f.IsDir
	}
	if !names["alloc"] || !names["web"] {
		t.Fatalf("List(/) = %+v", root)
	}
	logs, _, err := c.AllocFS().List(alloc, "alloc/logs", nil)
	if err != nil || !hasFile(logs, "web.stdout") {
		t.Fatalf("List(alloc/logs) = %+v, %v", logs, err)
	}
	st, _, err := c.AllocFS().Stat(alloc, "web/local/marker", nil)
	if err != nil || st.Name != "marker" || st.IsDir || st.Size != 8 || !strings.HasPrefix(st.ContentType, "text/plain") ||
		st.FileMode != "-rw-r--r--" || st.ModTime.IsZero() {
		t.Fatalf("Stat = %+v, %v", st, err)
	}
	if got := readAll(t, func() (io.ReadCloser, error) { return c.AllocFS().Cat(alloc, "web/local/marker", nil) }); got != "started\n" {
		t.Fatalf("Cat = %q", got)
	}
	if got := readAll(t, func() (io.ReadCloser, error) { return c.AllocFS().ReadAt(alloc, "web/local/marker", 2, 3, nil) }); got != "art" {
		t.Fatalf("ReadAt(2, 3) = %q", got)
	}
	for _, tc := range []struct {
		path   string
		status int
	}{
		{"../", http.StatusBadRequest},
		{"web/../../etc/passwd", http.StatusBadRequest},
		{"web/secrets", http.StatusForbidden},
		{"web/local/root/etc/passwd", http.StatusForbidden}, // a link out of the directory
		{"web/nope", http.StatusNotFound},
	} {
		if _, _, err := c.AllocFS().Stat(alloc, tc.path, nil); err == nil || !strings.Contains(err.Error(), "path") {
			t.Errorf("Stat(%q) = %v, want a refusal naming path", tc.path, err)
		}
		// Through the server's proxy: the status and the field.
		var body struct {
			Field  string
			Status int
		}
		code := getJSON(t, server+"/v1/client/fs/stat/"+alloc.ID[:8]+"?path="+tc.path, &body)
		if code != tc.status || body.Field != "path" {
			t.Errorf("server stat %q = %d %+v, want %d naming path", tc.path, code, body, tc.status)
		}
	}
	// Stream: the file, then what is appended to it.
	cancelStream := make(chan struct{})
	frames, streamErrs := c.AllocFS().Stream(alloc, "web/local/marker", api.OriginStart, 0, cancelStream, nil)
	next := func() string {
		select {
		case f := <-frames:
			if f == nil {
				t.Fatalf("stream ended: %v", <-streamErrs)
			}
			return string(f.Data)
		case err := <-streamErrs:
			t.Fatalf("stream: %v", err)
		case <-time.After(clientTimeout):
			t.Fatal("no frame")
		}
		return ""
	}
	if got := next(); got != "started\n" {
		t.Fatalf("first frame = %q", got)
	}
	if code, err := c.Allocations().Exec(context.Background(), alloc, "web", false, []string{"/bin/sh", "-c", "echo more >> local/marker"},
		strings.NewReader(""), io.Discard, io.Discard, nil, nil); err != nil || code != 0 {
		t.Fatalf("append: %d %v", code, err)
	}
	if got := next(); got != "more\n" {
		t.Fatalf("appended frame = %q", got)
	}
	close(cancelStream)
	var frame api.StreamFrame
	if code := getJSON(t, server+"/v1/client/fs/stream/"+alloc.ID[:8]+"?path=web/local/marker&follow=false&origin=end&offset=5", &frame); code != 200 ||
		string(frame.Data) != "more\n" || frame.File != "web/local/marker" || frame.Offset != 13 {
		t.Errorf("server stream, the last 5 bytes = %d %+v", code, frame)
	}

	var listed []ordoapi.AllocFileInfo
	if code := getJSON(t, server+"/v1/client/fs/ls/"+alloc.ID+"?path=web/local", &listed); code != 200 || len(listed) != 2 {
		t.Errorf("server ls web/local = %d %+v", code, listed)
	}

	// Statistics.
	stats, err := c.Allocations().Stats(alloc, nil)
	if err != nil {
		t.Fatal(err)
	}
	task := stats.Tasks["web"]
	if task == nil || len(task.Pids) == 0 || task.ResourceUsage.MemoryStats.RSS == 0 ||
		stats.ResourceUsage.MemoryStats.RSS < task.ResourceUsage.MemoryStats.RSS || stats.Timestamp == 0 {
		t.Fatalf("Allocations().Stats = %+v (web %+v)", stats, task)
	}
	host, err := c.Nodes().Stats(nodeID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if host.Memory == nil || host.Memory.Total == 0 || host.Memory.Used == 0 || len(host.CPU) == 0 || host.Uptime == 0 {
		t.Fatalf("Nodes().Stats = %+v", host)
	}

	// Exec: output, exit codes, stdin, the task's directory and environment.
	var stdout, stderr bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
	defer cancel()
	code, err := c.Allocations().Exec(ctx, alloc, "web", false, []string{"/bin/sh", "-c", "echo hi; pwd; echo $NOMAD_ALLOC_ID; echo oops >&2"},
		strings.NewReader(""), &stdout, &stderr, nil, nil)
	if err != nil || code != 0 || !strings.HasPrefix(stdout.String(), "hi\n") || !strings.HasSuffix(stdout.String(), "/web\n"+alloc.ID+"\n") ||
		stderr.String() != "oops\n" {
		t.Fatalf("Exec echo = %d, %v, stdout %q, stderr %q", code, err, stdout.String(), stderr.String())
	}
	code, err = c.Allocations().Exec(ctx, alloc, "web", false, []string{"/bin/sh", "-c", "exit 3"}, strings.NewReader(""), io.Discard, io.Discard, nil, nil)
	if err != nil || code != 3 {
		t.Fatalf("Exec exit 3 = %d, %v", code, err)
	}
	stdout.Reset()
	code, err = c.Allocations().Exec(ctx, alloc, "web", false, []string{"cat"}, strings.NewReader("piped"), &stdout, io.Discard, nil, nil)
	if err != nil || code != 0 || stdout.String() != "piped" {
		t.Fatalf("Exec cat = %d, %v, %q", code, err, stdout.String())
	}
	stdout.Reset()
	code, err = c.Allocations().Exec(ctx, alloc, "web", true, []string{"/bin/sh", "-c", "tty; exit 5"}, strings.NewReader(""), &stdout, io.Discard, nil, nil)
	if err != nil || code != 5 || !strings.HasPrefix(stdout.String(), "/dev/pts/") {
		t.Fatalf("Exec on a terminal = %d, %v, %q", code, err, stdout.String())
	}
	code, err = c.Allocations().Exec(ctx, alloc, "web", true, []string{"/bin/sh"}, strings.NewReader("exit 6\n"), io.Discard, io.Discard, nil, nil)
	if err != nil || code != 6 {
		t.Fatalf("Exec of a shell on a terminal, typing exit 6 = %d, %v", code, err)
	}
	if _, err := c.Allocations().Exec(ctx, alloc, "nope", false, []string{"true"}, strings.NewReader(""), io.Discard, io.Discard, nil, nil); err == nil ||
		!strings.Contains(err.Error(), "nope") {
		t.Fatalf("Exec in an unknown task = %v", err)
	}
	// Through the server's proxy, with ordo's client.
	oc, err := ordoapi.New([]string{server})
	if err != nil {
		t.Fatal(err)
	}
	stdout.Reset()
	code, err = oc.Exec(ctx, ordoapi.ExecRequest{AllocID: alloc.ID, Task: "web", Command: []string{"/bin/sh", "-c", "cat local/marker; exit 7"},
		Stdout: &stdout})
	if err != nil || code != 7 || stdout.String() != "started\nmore\n" {
		t.Fatalf("ordo Exec through the server = %d, %v, %q", code, err, stdout.String())
	}

	// Signal: the task's trap writes to its log.
	if err := c.Allocations().Signal(alloc, nil, "web", "SIGHUP"); err != nil {
		t.Fatal(err)
	}
	testagent.WaitFor(t, clientTimeout, "the trapped SIGHUP in the log", func() bool {
		return strings.Contains(readAll(t, func() (io.ReadCloser, error) { return c.AllocFS().Cat(alloc, "alloc/logs/web.stdout", nil) }), "got-hup")
	})
	if err := c.Allocations().Signal(alloc, nil, "web", "SIGNOPE"); err == nil || !strings.Contains(err.Error(), "Signal") {
		t.Errorf("Signal(SIGNOPE) = %v", err)
	}

	// Restart: recorded, not counted against the restart policy's attempts.
	if err := c.Allocations().Restart(alloc, "web", nil); err != nil {
		t.Fatal(err)
	}
	testagent.WaitFor(t, clientTimeout, "the task restarted and running", func() bool {
		a, _, err := c.Allocations().Info(alloc.ID, nil)
		if err != nil {
			return false
		}
		ts := a.TaskStates["web"]
		return ts != nil && ts.Restarts == 1 && ts.State == "running" && hasEvent(ts, "Restart Signaled") && hasEvent(ts, "Signaling") &&
			lastEvent(ts) == "Started"
	})
	if err := c.Allocations().RestartAllTasks(alloc, nil); err != nil {
		t.Fatal(err)
	}
	testagent.WaitFor(t, clientTimeout, "every task restarted again", func() bool {
		a, _, err := c.Allocations().Info(alloc.ID, nil)
		return err == nil && a.TaskStates["web"].Restarts == 2 && lastEvent(a.TaskStates["web"]) == "Started"
	})
	if err := c.Allocations().Restart(alloc, "nope", nil); err == nil {
		t.Error("restart of an unknown task accepted")
	}

	// GC: a running allocation is refused; a finished one is removed.
	if err := c.Allocations().GC(alloc, nil); err == nil {
		t.Error("GC of a running allocation accepted")
	}
	testagent.Register(t, c, shellJob("batch", "once", "echo done"))
	var done *api.Allocation
	testagent.WaitFor(t, clientTimeout, "the batch allocation complete", func() bool {
		list, _, err := c.Jobs().Allocations("once", false, nil)
		if err != nil || len(list) != 1 || list[0].ClientStatus != "complete" {
			return false
		}
		done, _, err = c.Allocations().Info(list[0].ID, nil)
		return err == nil
	})
	if _, _, err := c.AllocFS().List(done, "/", nil); err != nil {
		t.Fatalf("List of the finished allocation before GC: %v", err)
	}
	testagent.WaitFor(t, clientTimeout, "the finished allocation collected", func() bool {
		return c.Allocations().GC(done, nil) == nil // until the client has reported its end
	})
	if _, _, err := c.AllocFS().List(done, "/", nil); err == nil || !strings.Contains(err.Error(), "404") {
		t.Fatalf("List after GC = %v, want 404", err)
	}
	if err := c.Nodes().GC(nodeID, nil); err != nil {
		t.Fatalf("Nodes().GC = %v", err)
	}
	if err := c.Nodes().GC("", nil); err == nil || !strings.Contains(err.Error(), "node_id") {
		t.Errorf("Nodes().GC without a node = %v", err)
	}
}

// An exec session is not cut by the write timeout of the server's or the
// node's API: it lasts as long as the command.
func TestExecOutlivesWriteTimeout(t *testing.T) {
	a, c, _ := startDevClient(t, func(cfg *agent.Config) { cfg.HTTP.WriteTimeout = time.Second })
	testagent.Register(t, c, shellJob("service", "web", "while true; do sleep 0.1; done"))
	alloc := runningAlloc(t, c, "web")
	ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
	defer cancel()
	var out bytes.Buffer
	code, err := c.Allocations().Exec(ctx, alloc, "web", false, []string{"/bin/sh", "-c", "sleep 2; echo node"}, strings.NewReader(""), &out, io.Discard, nil, nil)
	if err != nil || code != 0 || out.String() != "node\n" {
		t.Fatalf("Exec on the node = %d, %v, %q", code, err, out.String())
	}
	oc, err := ordoapi.New([]string{"http://" + a.HTTPAddr()})
	if err != nil {
		t.Fatal(err)
	}
	out.Reset()
	code, err = oc.Exec(ctx, ordoapi.ExecRequest{AllocID: alloc.ID, Command: []string{"/bin/sh", "-c", "sleep 2; echo server"}, Stdout: &out})
	if err != nil || code != 0 || out.String() != "server\n" {
		t.Fatalf("Exec through the server = %d, %v, %q", code, err, out.String())
	}
}

func hasFile(list []*api.AllocFileInfo, name string) bool {
	for _, f := range list {
		if f.Name == name {
			return true
		}
	}
	return false
}

func hasEvent(ts *api.TaskState, typ string) bool {
	for _, e := range ts.Events {
		if e.Type == typ {
			return true
		}
	}
	return false
}

func lastEvent(ts *api.TaskState) string {
	if ts == nil || len(ts.Events) == 0 {
		return ""
	}
	return ts.Events[len(ts.Events)-1].Type
}

func readAll(t *testing.T, open func() (io.ReadCloser, error)) string {
	t.Helper()
	r, err := open()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func getJSON(t *testing.T, url string, out any) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	_ = json.NewDecoder(resp.Body).Decode(out)
	return resp.StatusCode
}
