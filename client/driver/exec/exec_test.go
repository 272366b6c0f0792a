package exec_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/ordoplane/ordo/client/driver"
	"github.com/ordoplane/ordo/client/driver/drivertest"
	"github.com/ordoplane/ordo/client/driver/exec"
	"github.com/ordoplane/ordo/storage/waittest"
)

// patience bounds the tests' waits on conditions.
const patience = 10 * time.Second

func newDriver(t *testing.T) *exec.Driver {
	t.Helper()
	d, err := exec.New(exec.Config{PollInterval: 10 * time.Millisecond, LogCheckInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

func sh(script string) map[string]any {
	return map[string]any{"command": "/bin/sh", "args": []any{"-c", script}}
}

func TestConformance(t *testing.T) {
	drivertest.Run(t, func() driver.Driver { return newDriver(t) }, func(kind string) map[string]any {
		switch kind {
		case drivertest.KindExit0:
			return sh("exit 0")
		case drivertest.KindExit3:
			return sh("exit 3")
		case drivertest.KindLong:
			return sh("echo ready; exec sleep 60")
		case drivertest.KindIgnoreKill:
			// An ignored signal stays ignored across exec.
			return sh("trap '' TERM; echo ready; exec sleep 60")
		case drivertest.KindBadConfig:
			return map[string]any{"args": []any{"-c", "exit 0"}}
		}
		t.Fatalf("unknown kind %q", kind)
		return nil
	})
}

// taskConfig returns a TaskConfig running script in a new directory.
func taskConfig(t *testing.T, script string) driver.TaskConfig {
	t.Helper()
	dir := t.TempDir()
	return driver.TaskConfig{
		AllocID:     "a1",
		Task:        "web",
		ID:          "a1-web-0",
		Config:      sh(script),
		Dir:         dir,
		StdoutPath:  filepath.Join(dir, "logs", "web.stdout"),
		StderrPath:  filepath.Join(dir, "logs", "web.stderr"),
		LogMaxBytes: 1 << 20,
		LogMaxFiles: 3,
		KillTimeout: 5 * time.Second,
	}
}

func start(t *testing.T, d driver.Driver, cfg driver.TaskConfig) driver.Handle {
	t.Helper()
	h, err := d.Start(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		if err := h.Signal("SIGKILL"); err == nil {
			drivertest.Wait(t, h)
		}
	})
	return h
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func pidOf(t *testing.T, h driver.Handle) int {
	t.Helper()
	pid, err := strconv.Atoi(h.State().Data["pid"])
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// gone reports whether no live process holds pid.
func gone(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return f[0] == "Z" || f[0] == "X"
}

func TestOutputEnvAndDir(t *testing.T) {
	d := newDriver(t)
	cfg := taskConfig(t, `echo out; echo err >&2; echo "$GREETING"; pwd; echo "$PATH"`)
	cfg.Env = map[string]string{"GREETING": "hello"}
	res := drivertest.Wait(t, start(t, d, cfg))
	if !res.Successful() {
		t.Fatalf("exit = %+v", res)
	}
	want := "out\nhello\n" + cfg.Dir + "\n/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\n"
	if got := readFile(t, cfg.StdoutPath); got != want {
		t.Errorf("stdout = %q, want %q", got, want)
	}
	if got := readFile(t, cfg.StderrPath); got != "err\n" {
		t.Errorf("stderr = %q, want %q", got, "err\n")
	}
}

func TestCommandLookedUpInTaskPath(t *testing.T) {
	d := newDriver(t)
	cfg := taskConfig(t, "")
	cfg.Env = map[string]string{"PATH": "/usr/bin:/bin"}
	cfg.Config = map[string]any{"command": "sh", "args": []string{"-c", "echo $0 $1", "a", "b"}}
	if res := drivertest.Wait(t, start(t, d, cfg)); !res.Successful() {
		t.Fatalf("exit = %+v", res)
	}
	if got := readFile(t, cfg.StdoutPath); got != "a b\n" {
		t.Errorf("stdout = %q", got)
	}

	cfg = taskConfig(t, "")
	cfg.Config = map[string]any{"command": "no-such-command-anywhere"}
	_, err := d.Start(context.Background(), cfg)
	var ce *driver.ConfigError
	if err == nil || errors.As(err, &ce) || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("Start(missing command) = %v, want a not found error", err)
	}
}

func TestExitBySignal(t *testing.T) {
	res := drivertest.Wait(t, start(t, newDriver(t), taskConfig(t, "kill -USR1 $$")))
	if res.Signal != int(syscall.SIGUSR1) || res.ExitCode != 128+int(syscall.SIGUSR1) || res.Successful() {
		t.Fatalf("exit = %+v, want SIGUSR1", res)
	}
}

func TestSignalReachesMainProcess(t *testing.T) {
	cfg := taskConfig(t, "trap 'echo got USR2; exit 4' USR2; echo ready; while :; do sleep 0.05; done")
	h := start(t, newDriver(t), cfg)
	drivertest.WaitForOutput(t, cfg.StdoutPath, "ready")
	if err := h.Signal("usr2"); err != nil {
		t.Fatal(err)
	}
	if res := drivertest.Wait(t, h); res.ExitCode != 4 {
		t.Fatalf("exit = %+v, want code 4", res)
	}
	if got := readFile(t, cfg.StdoutPath); !strings.Contains(got, "got USR2") {
		t.Fatalf("stdout = %q", got)
	}
	if err := h.Signal("SIGUSR2"); err == nil {
		t.Fatal("Signal after exit succeeded")
	}
}

func TestStopSendsConfiguredSignal(t *testing.T) {
	cfg := taskConfig(t, "trap 'echo got HUP; exit 0' HUP; echo ready; while :; do sleep 0.05; done")
	cfg.KillSignal = "SIGHUP"
	h := start(t, newDriver(t), cfg)
	drivertest.WaitForOutput(t, cfg.StdoutPath, "ready")
	if took := drivertest.Stop(t, h); took >= cfg.KillTimeout {
		t.Fatalf("Stop took %v, as long as the kill timeout", took)
	}
	if res := drivertest.Wait(t, h); !res.Successful() {
		t.Fatalf("exit = %+v, want 0 from the trap", res)
	}
	if got := readFile(t, cfg.StdoutPath); !strings.Contains(got, "got HUP") {
		t.Fatalf("stdout = %q, want the trap's line", got)
	}
}

func TestStopKillsGroupAfterKillTimeout(t *testing.T) {
	cfg := taskConfig(t, "trap '' TERM; sleep 60 & echo child $!; echo ready; while :; do sleep 0.05; done")
	cfg.KillTimeout = 400 * time.Millisecond
	h := start(t, newDriver(t), cfg)
	drivertest.WaitForOutput(t, cfg.StdoutPath, "ready")
	child := childPid(t, cfg.StdoutPath)
	took := drivertest.Stop(t, h)
	if took < cfg.KillTimeout || took > cfg.KillTimeout+3*time.Second {
		t.Fatalf("Stop took %v, want the kill timeout %v and a little", took, cfg.KillTimeout)
	}
	if res := drivertest.Wait(t, h); res.Signal != int(syscall.SIGKILL) {
		t.Fatalf("exit = %+v, want SIGKILL", res)
	}
	waittest.For(t, patience, "end of the task's background child", func() bool { return gone(child) })
}

func TestLeftoverChildrenKilledOnExit(t *testing.T) {
	cfg := taskConfig(t, "sleep 60 & echo child $!; exit 0")
	h := start(t, newDriver(t), cfg)
	if res := drivertest.Wait(t, h); !res.Successful() {
		t.Fatalf("exit = %+v", res)
	}
	child := childPid(t, cfg.StdoutPath)
	waittest.For(t, patience, "end of the task's background child", func() bool { return gone(child) })
}

func childPid(t *testing.T, stdout string) int {
	t.Helper()
	m := regexp.MustCompile(`child (\d+)`).FindStringSubmatch(readFile(t, stdout))
	if m == nil {
		t.Fatalf("no child pid in %q", readFile(t, stdout))
	}
	pid, _ := strconv.Atoi(m[1])
	return pid
}

func TestLogRotation(t *testing.T) {
	cfg := taskConfig(t, `i=0; while :; do echo "line $i"; i=$((i+1)); sleep 0.005; done`)
	cfg.LogMaxBytes = 200
	cfg.LogMaxFiles = 3
	h := start(t, newDriver(t), cfg)
	rotated := func(n int) string { return driver.RotatedPath(cfg.StdoutPath, n) }
	exists := func(p string) bool { _, err := os.Stat(p); return err == nil }
	waittest.For(t, patience, rotated(2), func() bool { return exists(rotated(2)) })
	// One more rotation, so the oldest has been dropped at least once.
	first := readFile(t, rotated(2))
	waittest.For(t, patience, "another rotation", func() bool { b, _ := os.ReadFile(rotated(2)); return string(b) != first })
	drivertest.Stop(t, h)
	if exists(rotated(3)) {
		t.Errorf("%s exists with LogMaxFiles 3", rotated(3))
	}
	last := -1
	for _, n := range []int{2, 1, 0} {
		content := readFile(t, rotated(n))
		if n > 0 && len(content) < int(cfg.LogMaxBytes) {
			t.Errorf("%s holds %d bytes, less than LogMaxBytes", rotated(n), len(content))
		}
		for _, line := range strings.Split(strings.TrimSpace(content), "\n") {
			if line == "" {
				continue
			}
			i, err := strconv.Atoi(strings.TrimPrefix(line, "line "))
			if err != nil || i <= last {
				t.Fatalf("%s: line %q after line %d: rotated files out of order or corrupt", rotated(n), line, last)
			}
			last = i
		}
	}
	if last < 0 {
		t.Fatal("no lines logged")
	}
}

// TestMemoryHardLimit: memory_hard_limit limits the address space to the
// task's memory, not its memory_max (which exec ignores); without it
// the task has the client's limit.
func TestMemoryHardLimit(t *testing.T) {
	d := newDriver(t)
	cfg := taskConfig(t, "exec sleep 60")
	cfg.MemoryMB, cfg.MemoryMaxMB = 64, 256
	cfg.Config["memory_hard_limit"] = true
	h := start(t, d, cfg)
	if got := addressSpaceLimit(t, pidOf(t, h)); got != strconv.Itoa(64<<20) {
		t.Errorf("limited task: max address space %s, want %d", got, 64<<20)
	}
	drivertest.Stop(t, h)

	cfg = taskConfig(t, "exec sleep 60")
	cfg.MemoryMB = 64
	h = start(t, d, cfg)
	if got, want := addressSpaceLimit(t, pidOf(t, h)), addressSpaceLimit(t, os.Getpid()); got != want {
		t.Errorf("unlimited task: max address space %s, want the client's %s", got, want)
	}
}

// addressSpaceLimit reads the soft RLIMIT_AS of pid from /proc.
func addressSpaceLimit(t *testing.T, pid int) string {
	t.Helper()
	for _, line := range strings.Split(readFile(t, "/proc/"+strconv.Itoa(pid)+"/limits"), "\n") {
		if rest, ok := strings.CutPrefix(line, "Max address space"); ok {
			return strings.Fields(rest)[0]
		}
	}
	t.Fatal("no address space limit in /proc/<pid>/limits")
	return ""
}

func TestBadConfig(t *testing.T) {
	for _, tc := range []struct {
		name    string
		edit    func(*driver.TaskConfig)
		wantKey string
	}{
		{"missing command", func(c *driver.TaskConfig) { delete(c.Config, "command") }, "config.command"},
		{"command not a string", func(c *driver.TaskConfig) { c.Config["command"] = 5 }, "config.command"},
		{"args not strings", func(c *driver.TaskConfig) { c.Config["args"] = []any{"-c", 1} }, "config.args"},
		{"unknown key", func(c *driver.TaskConfig) { c.Config["comand"] = "x" }, "config.comand"},
		{"limit without memory", func(c *driver.TaskConfig) { c.Config["memory_hard_limit"] = true }, "config.memory_hard_limit"},
		{"limit not a bool", func(c *driver.TaskConfig) { c.Config["memory_hard_limit"] = "yes" }, "config.memory_hard_limit"},
		{"kill signal", func(c *driver.TaskConfig) { c.KillSignal = "SIGFOO" }, "kill_signal"},
		{"kill timeout", func(c *driver.TaskConfig) { c.KillTimeout = -time.Second }, "kill_timeout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := taskConfig(t, "exit 0")
			tc.edit(&cfg)
			_, err := newDriver(t).Start(context.Background(), cfg)
			var ce *driver.ConfigError
			if !errors.As(err, &ce) || ce.Key != tc.wantKey {
				t.Fatalf("Start = %v, want a ConfigError for %s", err, tc.wantKey)
			}
			if !strings.Contains(err.Error(), tc.wantKey) {
				t.Errorf("error %q does not name %s", err, tc.wantKey)
			}
			if _, err := os.Stat(cfg.StdoutPath); err == nil {
				t.Error("a refused task created its log file")
			}
		})
	}
}

func TestRecoverPollsExitAndRotates(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "go")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := taskConfig(t, `echo ready; read line < "$0"; head -c 300 /dev/zero | tr '\0' x; read line < "$0"; exit 0`)
	cfg.Config["args"] = []any{"-c", cfg.Config["args"].([]any)[1], fifo}
	cfg.LogMaxBytes = 100
	cfg.LogMaxFiles = 2
	firstClient := newDriver(t)
	first, err := firstClient.Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	drivertest.WaitForOutput(t, cfg.StdoutPath, "ready")

	// The first client goes away, leaving the task running; a second one
	// re-attaches.
	if err := firstClient.Close(); err != nil {
		t.Fatal(err)
	}
	client, err := exec.New(exec.Config{PollInterval: 10 * time.Millisecond, LogCheckInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	h, err := client.Recover(context.Background(), first.State())
	if err != nil {
		t.Fatalf("Recover: %v", err)
	}
	// The task logs past LogMaxBytes only now.
	if err := os.WriteFile(fifo, []byte("go\n"), 0); err != nil {
		t.Fatal(err)
	}
	waittest.For(t, patience, "rotation by the recovering client", func() bool {
		_, err := os.Stat(driver.RotatedPath(cfg.StdoutPath, 1))
		return err == nil
	})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := h.Wait(ctx); err == nil {
		t.Fatal("recovered task reported exited while running")
	}

	if err := os.WriteFile(fifo, []byte("go\n"), 0); err != nil {
		t.Fatal(err)
	}
	res := drivertest.Wait(t, h)
	if !errors.Is(res.Err, exec.ErrExitUnknown) || res.ExitCode != -1 || res.Successful() {
		t.Fatalf("recovered exit = %+v, want ErrExitUnknown", res)
	}
	if res := drivertest.Wait(t, first); !res.Successful() {
		t.Fatalf("parent's exit = %+v", res)
	}
}

func TestRecoverGoneAndRecycled(t *testing.T) {
	d := newDriver(t)
	h := start(t, d, taskConfig(t, "echo ready; exec sleep 60"))
	live := h.State()
	ctx := context.Background()

	recycled := cloneState(live)
	ticks, _ := strconv.ParseUint(live.Data["start_ticks"], 10, 64)
	recycled.Data["start_ticks"] = strconv.FormatUint(ticks+1, 10)
	if _, err := newDriver(t).Recover(ctx, recycled); !errors.Is(err, driver.ErrTaskGone) {
		t.Errorf("Recover with another start time = %v, want ErrTaskGone", err)
	}
	rebooted := cloneState(live)
	rebooted.Data["boot_id"] = "00000000-0000-0000-0000-000000000000"
	if _, err := newDriver(t).Recover(ctx, rebooted); !errors.Is(err, driver.ErrTaskGone) {
		t.Errorf("Recover from another boot = %v, want ErrTaskGone", err)
	}
	broken := cloneState(live)
	delete(broken.Data, "pid")
	if _, err := newDriver(t).Recover(ctx, broken); err == nil || errors.Is(err, driver.ErrTaskGone) {
		t.Errorf("Recover a state without pid = %v, want a malformed-state error", err)
	}

	drivertest.Stop(t, h)
	if _, err := newDriver(t).Recover(ctx, live); !errors.Is(err, driver.ErrTaskGone) {
		t.Errorf("Recover a dead pid = %v, want ErrTaskGone", err)
	}
}

func cloneState(s driver.HandleState) driver.HandleState {
	c := s
	c.Data = map[string]string{}
	for k, v := range s.Data {
		c.Data[k] = v
	}
	return c
}

// TestCloseLeavesTasksRunning is not parallel: it checks for leaked goroutines.
func TestCloseLeavesTasksRunning(t *testing.T) {
	before := goleak.IgnoreCurrent()
	first, err := exec.New(exec.Config{PollInterval: 10 * time.Millisecond, LogCheckInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	cfg := taskConfig(t, "echo ready; exec sleep 60")
	h, err := first.Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	if gone(pidOf(t, h)) {
		t.Fatal("Close ended the task")
	}
	if _, err := first.Start(context.Background(), cfg); !errors.Is(err, exec.ErrClosed) {
		t.Fatalf("Start after Close = %v, want ErrClosed", err)
	}

	second, err := exec.New(exec.Config{PollInterval: 10 * time.Millisecond, LogCheckInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	again, err := second.Recover(context.Background(), h.State())
	if err != nil {
		t.Fatal(err)
	}
	drivertest.Stop(t, again)
	drivertest.Wait(t, h)
	if err := second.Close(); err != nil {
		t.Fatal(err)
	}
	goleak.VerifyNone(t, before)
}

func TestFingerprint(t *testing.T) {
	fp := newDriver(t).Fingerprint()
	if !fp.Detected || !fp.Healthy || fp.Attributes["driver.exec"] != "1" {
		t.Fatalf("Fingerprint = %+v", fp)
	}
}
