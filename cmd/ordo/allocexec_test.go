package main

import (
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"

	"github.com/ordoplane/ordo/cmd/agent"
	"github.com/ordoplane/ordo/test/testagent"
)

func TestNormalizeExecArgs(t *testing.T) {
	for _, tc := range []struct{ in, want []string }{
		{[]string{"alloc", "exec", "-task", "web", "abc", "ls", "-la"}, []string{"alloc", "exec", "--task", "web", "abc", "ls", "-la"}},
		{[]string{"-address", "http://x", "alloc", "exec", "-i=false", "abc", "sh", "-c", "echo -n"},
			[]string{"--address", "http://x", "alloc", "exec", "--i=false", "abc", "sh", "-c", "echo -n"}},
		{[]string{"alloc", "exec", "-t", "-address", "http://x", "abc", "--", "x"}, []string{"alloc", "exec", "-t", "--address", "http://x", "abc", "--", "x"}},
		{[]string{"alloc", "exec", "--", "abc", "-x"}, []string{"alloc", "exec", "--", "abc", "-x"}},
		// -job takes no value: the job id after it is the first argument.
		{[]string{"alloc", "exec", "-job", "web", "ls", "-la"}, []string{"alloc", "exec", "--job", "web", "ls", "-la"}},
	} {
		if got := normalizeArgs(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("normalizeArgs(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// The alloc verbs a Nomad user types — exec, fs, signal, restart — against
// a dev agent running a real exec task, through the server.
func TestAllocExecFSSignalRestart(t *testing.T) {
	const timeout = 30 * time.Second
	cfg := testagent.DevConfig(t.TempDir())
	cfg.Client = agent.DevClientConfig()
	cfg.Client.NodeName = "dev-node"
	cfg.Logger = slog.New(slog.DiscardHandler)
	a, nc := testagent.StartDev(t, cfg)
	addr := "http://" + a.HTTPAddr()
	testagent.WaitFor(t, timeout, "the dev node ready", func() bool {
		nodes, _, err := nc.Nodes().List(nil)
		return err == nil && len(nodes) == 1 && nodes[0].Status == "ready"
	})
	job := testagent.SleepJob("service", "shell", 1, 100)
	job.TaskGroups[0].Tasks[0].Name = "web"
	job.TaskGroups[0].Tasks[0].Config = map[string]any{"command": "/bin/sh", "args": []string{"-c",
		`echo started > local/marker; trap 'echo got-hup' HUP; while true; do sleep 0.1; done`}}
	testagent.Register(t, nc, job)
	var id string
	testagent.WaitFor(t, timeout, "the allocation running with its marker", func() bool {
		list, _, err := nc.Jobs().Allocations("shell", false, nil)
		if err != nil || len(list) != 1 || list[0].ClientStatus != "running" {
			return false
		}
		id = list[0].ID
		code, _, _ := runCLI("alloc", "fs", "-address", addr, "-stat", id[:8], "web/local/marker")
		return code == 0
	})
	prefix := id[:8]
	cli := func(args ...string) (int, string, string) {
		return runCLI(append([]string{"-address", addr}, args...)...)
	}

	// exec: output, exit codes, flags of the command kept as typed.
	if code, out, errOut := cli("alloc", "exec", prefix, "/bin/sh", "-c", "echo hi; echo oops >&2"); code != 0 || out != "hi\n" || errOut != "oops\n" {
		t.Errorf("exec echo: %d %q %q", code, out, errOut)
	}
	if code, out, errOut := cli("alloc", "exec", "-i=false", "-task", "web", prefix, "ls", "-a", "local"); code != 0 ||
		!strings.Contains(out, "marker") || !strings.Contains(out, "..") {
		t.Errorf("exec ls -a: %d %q %q", code, out, errOut)
	}
	if code, _, errOut := cli("alloc", "exec", prefix, "sh", "-c", "exit 4"); code != 4 || errOut != "" {
		t.Errorf("exec exit 4: %d %q", code, errOut)
	}
	if code, out, errOut := runCLIWithInput("piped", "-address", addr, "alloc", "exec", prefix, "cat"); code != 0 || out != "piped" {
		t.Errorf("exec cat: %d %q %q", code, out, errOut)
	}
	if code, out, errOut := cli("alloc", "exec", "-t", "-i=false", prefix, "/bin/sh", "-c", "tty; exit 2"); code != 2 || !strings.HasPrefix(out, "/dev/pts/") {
		t.Errorf("exec -t: %d %q %q", code, out, errOut)
	}
	if code, _, errOut := cli("alloc", "exec", "-task", "nope", prefix, "true"); code != 1 || !strings.Contains(errOut, `no task "nope"`) {
		t.Errorf("exec in an unknown task: %d %q", code, errOut)
	}

	// fs: a directory's entries, a file, its entry, refusals.
	if code, out, errOut := cli("alloc", "fs", prefix); code != 0 || !strings.Contains(out, "Mode") || !strings.Contains(out, "alloc/") ||
		!strings.Contains(out, "web/") {
		t.Errorf("fs: %d %q %q", code, out, errOut)
	}
	if code, out, errOut := cli("alloc", "fs", prefix, "web/local/marker"); code != 0 || out != "started\n" {
		t.Errorf("fs file: %d %q %q", code, out, errOut)
	}
	if code, out, errOut := cli("alloc", "fs", "-stat", prefix, "web/local/marker"); code != 0 || !strings.Contains(out, "-rw-r--r--") ||
		!strings.Contains(out, "8 B") || !strings.Contains(out, "marker") {
		t.Errorf("fs -stat: %d %q %q", code, out, errOut)
	}
	if code, _, errOut := cli("alloc", "fs", prefix, "web/secrets"); code != 1 || !strings.Contains(errOut, "secrets") {
		t.Errorf("fs secrets: %d %q", code, errOut)
	}
	if code, _, errOut := cli("alloc", "fs", prefix, "../.."); code != 1 || !strings.Contains(errOut, "path") {
		t.Errorf("fs ../..: %d %q", code, errOut)
	}

	// signal: the task's trap writes to its log; the event is recorded.
	if code, _, errOut := cli("alloc", "signal", "-s", "sighup", prefix, "web"); code != 0 {
		t.Fatalf("signal: %d %q", code, errOut)
	}
	testagent.WaitFor(t, timeout, "the trapped SIGHUP in the log", func() bool {
		_, out, _ := cli("alloc", "fs", prefix, "alloc/logs/web.stdout")
		return strings.Contains(out, "got-hup")
	})

	// restart: the task runs again, Restarts counts it.
	if code, _, errOut := cli("alloc", "restart", prefix); code != 0 {
		t.Fatalf("restart: %d %q", code, errOut)
	}
	testagent.WaitFor(t, timeout, "the task restarted", func() bool {
		al, _, err := nc.Allocations().Info(id, nil)
		return err == nil && al.TaskStates["web"].Restarts == 1 && al.TaskStates["web"].State == "running" &&
			lastTaskEvent(al.TaskStates["web"]) == "Started"
	})
	if code, out, _ := cli("alloc", "status", prefix); code != 0 || !strings.Contains(out, "Restart Signaled") || !strings.Contains(out, "Signaling") {
		t.Errorf("alloc status after restart and signal: %d %q", code, out)
	}
	if code, _, errOut := cli("alloc", "restart", prefix, "nope"); code != 1 || !strings.Contains(errOut, `no task "nope"`) {
		t.Errorf("restart of an unknown task: %d %q", code, errOut)
	}
}

func lastTaskEvent(ts *api.TaskState) string {
	if ts == nil || len(ts.Events) == 0 {
		return ""
	}
	return ts.Events[len(ts.Events)-1].Type
}
