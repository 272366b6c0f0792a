package docker_test

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ordoplane/ordo/client/driver"
	"github.com/ordoplane/ordo/client/driver/docker"
	"github.com/ordoplane/ordo/client/driver/docker/dockertest"
	"github.com/ordoplane/ordo/client/driver/drivertest"
	"github.com/ordoplane/ordo/clock/clocktest"
)

// daemon is the package's own dockerd, started by TestMain.
var daemon *dockertest.Daemon

func TestMain(m *testing.M) { os.Exit(dockertest.Main(m, &daemon)) }

// patience bounds the tests' waits on conditions.
const patience = 20 * time.Second

func newDriver(t testing.TB, mod func(*docker.Config)) *docker.Driver {
	t.Helper()
	cfg := docker.Config{Endpoint: daemon.Endpoint, RetryInterval: 50 * time.Millisecond}
	if mod != nil {
		mod(&cfg)
	}
	d, err := docker.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// sh is the config of a busybox container running script; init runs
// docker's init as PID 1, so that the shell gets the kill signal's
// default action (PID 1 of a container ignores signals it does not
// handle).
func sh(script string) map[string]any {
	return map[string]any{"image": daemon.Image, "command": "/bin/sh", "args": []any{"-c", script}, "init": true}
}

func TestConformance(t *testing.T) {
	drivertest.Run(t, func() driver.Driver { return newDriver(t, nil) }, func(kind string) map[string]any {
		switch kind {
		case drivertest.KindExit0:
			return sh("exit 0")
		case drivertest.KindExit3:
			return sh("exit 3")
		case drivertest.KindLong:
			return sh("echo ready; exec sleep 60")
		case drivertest.KindIgnoreKill:
			return sh("trap '' TERM; echo ready; exec sleep 60")
		case drivertest.KindBadConfig:
			return map[string]any{"command": "/bin/sh"}
		}
		t.Fatalf("unknown kind %q", kind)
		return nil
	})
}

// taskConfig is a task of alloc a1 running script in a layout like the
// client's: <alloc>/alloc, <alloc>/web.
func taskConfig(t testing.TB, config map[string]any) driver.TaskConfig {
	t.Helper()
	root := t.TempDir()
	alloc := filepath.Join(root, "alloc")
	if err := os.MkdirAll(filepath.Join(alloc, "logs"), 0o755); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "web")
	id := strings.ReplaceAll(t.Name(), "/", "-")
	return driver.TaskConfig{
		AllocID: "alloc-" + id, Task: "web", ID: id + "-0", Config: config, Dir: dir,
		Env: map[string]string{"NOMAD_ALLOC_DIR": alloc, "NOMAD_TASK_DIR": filepath.Join(dir, "local"),
			"NOMAD_SECRETS_DIR": filepath.Join(dir, "secrets"), "NOMAD_ALLOC_ID": "alloc-" + id, "GREETING": "hi there"},
		StdoutPath: filepath.Join(alloc, "logs", "web.stdout"), StderrPath: filepath.Join(alloc, "logs", "web.stderr"),
		LogMaxBytes: 1 << 20, LogMaxFiles: 2, KillTimeout: 5 * time.Second,
	}
}

func start(t *testing.T, d driver.Driver, cfg driver.TaskConfig) driver.Handle {
	t.Helper()
	h, err := d.Start(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), patience)
		defer cancel()
		h.Stop(ctx)
	})
	return h
}

func TestEnvDirsAndLogs(t *testing.T) {
	d := newDriver(t, nil)
	cfg := taskConfig(t, sh(`echo "$GREETING $NOMAD_ALLOC_DIR $NOMAD_TASK_DIR $NOMAD_SECRETS_DIR"; echo oops >&2; `+
		`echo shared > /alloc/out; echo local > /local/out; echo secret > /secrets/out; exit 0`))
	res := drivertest.Wait(t, start(t, d, cfg))
	if !res.Successful() {
		t.Fatalf("exit = %+v", res)
	}
	if b, _ := os.ReadFile(cfg.StdoutPath); string(b) != "hi there /alloc /local /secrets\n" {
		t.Errorf("stdout = %q", b)
	}
	if b, _ := os.ReadFile(cfg.StderrPath); string(b) != "oops\n" {
		t.Errorf("stderr = %q", b)
	}
	for path, want := range map[string]string{
		filepath.Join(cfg.Env["NOMAD_ALLOC_DIR"], "out"): "shared\n",
		filepath.Join(cfg.Dir, "local", "out"):           "local\n",
		filepath.Join(cfg.Dir, "secrets", "out"):         "secret\n",
	} {
		if b, err := os.ReadFile(path); string(b) != want {
			t.Errorf("%s = %q (%v), want %q", path, b, err, want)
		}
	}
	if ids := daemon.Containers(t, docker.LabelAllocID, cfg.AllocID); len(ids) != 0 {
		t.Errorf("containers of the exited task left: %v", ids)
	}
}

// TestConfigErrors: what the driver refuses, as a *driver.ConfigError
// naming the key, before anything runs.
func TestConfigErrors(t *testing.T) {
	d := newDriver(t, nil)
	withVolumes := newDriver(t, func(c *docker.Config) { c.VolumesEnabled = true })
	for _, tc := range []struct {
		name string
		d    *docker.Driver
		cfg  map[string]any
		key  string
	}{
		{"no image", d, map[string]any{"command": "/bin/true"}, "config.image"},
		{"unknown key", d, map[string]any{"image": daemon.Image, "sysctl": map[string]any{}}, "config.sysctl"},
		{"bridge", d, map[string]any{"image": daemon.Image, "network_mode": "bridge"}, "config.network_mode"},
		{"named network", d, map[string]any{"image": daemon.Image, "network_mode": "backend"}, "config.network_mode"},
		{"privileged not allowed", d, map[string]any{"image": daemon.Image, "privileged": true}, "config.privileged"},
		{"unknown port", d, map[string]any{"image": daemon.Image, "ports": []any{"admin"}}, "config.ports"},
		{"driver label", d, map[string]any{"image": daemon.Image, "labels": map[string]any{docker.LabelTaskID: "x"}}, "config.labels." + docker.LabelTaskID},
		{"host volume not enabled", d, map[string]any{"image": daemon.Image, "volumes": []any{"/etc:/host-etc"}}, "config.volumes"},
		{"volume out of the allocation", withVolumes, map[string]any{"image": daemon.Image, "volumes": []any{"../../x:/x"}}, "config.volumes"},
		{"volume without a container path", d, map[string]any{"image": daemon.Image, "volumes": []any{"local"}}, "config.volumes"},
		{"args not strings", d, map[string]any{"image": daemon.Image, "command": "/bin/sh", "args": []any{1}}, "config.args"},
		{"pids_limit", d, map[string]any{"image": daemon.Image, "pids_limit": int64(0)}, "config.pids_limit"},
		{"mount type", d, map[string]any{"image": daemon.Image, "mount": []any{map[string]any{"type": "nfs", "target": "/x"}}}, "config.mount.0.type"},
		{"mount key", d, map[string]any{"image": daemon.Image, "mount": []any{map[string]any{"type": "tmpfs", "target": "/x", "size": int64(1)}}}, "config.mount.0.size"},
		{"bind out of the allocation", d, map[string]any{"image": daemon.Image, "mount": []any{map[string]any{"type": "bind", "target": "/x", "source": "/etc"}}}, "config.mount.0.source"},
		{"volume mount not enabled", d, map[string]any{"image": daemon.Image, "mount": []any{map[string]any{"type": "volume", "target": "/x", "source": "data"}}}, "config.mount.0.type"},
		{"ulimit", d, map[string]any{"image": daemon.Image, "ulimit": map[string]any{"nofile": "4096:1024"}}, "config.ulimit.nofile"},
		{"device", d, map[string]any{"image": daemon.Image, "devices": []any{map[string]any{"host_path": "dev/null"}}}, "config.devices.0.host_path"},
		{"logging", d, map[string]any{"image": daemon.Image, "logging": []any{map[string]any{"type": "syslog"}}}, "config.logging.type"},
	} {
		_, err := tc.d.Start(context.Background(), taskConfig(t, tc.cfg))
		ce, ok := errors.AsType[*driver.ConfigError](err)
		if !ok || ce.Key != tc.key {
			t.Errorf("%s: Start = %v, want a ConfigError for %s", tc.name, err, tc.key)
		}
	}
	if _, err := d.Start(context.Background(), taskConfig(t, map[string]any{"image": "ordo-no-such-image:1"})); err == nil || !strings.Contains(err.Error(), "could not be pulled") {
		t.Errorf("Start with an image the daemon lacks and cannot pull = %v", err)
	}
}

// TestContainerSettings: what the task asks for is what the daemon runs:
// a relative volume inside the allocation, the memory limit and CPU
// shares, labels, hostname, read-only root, pids limit. (Privileged
// containers need a host that grants every capability, which a test
// sandbox may not: TestPrivilegedAllowed checks only the driver's side.)
func TestContainerSettings(t *testing.T) {
	d := newDriver(t, func(c *docker.Config) { c.KeepContainers = true })
	cfg := taskConfig(t, map[string]any{"image": daemon.Image, "command": "/bin/sh", "args": []any{"-c", "cat /data/in; hostname"},
		"volumes": []any{"../alloc/data:/data:ro"}, "labels": []any{map[string]any{"team": "web"}},
		"hostname": "box", "readonly_rootfs": true, "network_mode": "none", "pids_limit": int64(64)})
	cfg.CPU, cfg.MemoryMB = 250, 32
	data := filepath.Join(cfg.Env["NOMAD_ALLOC_DIR"], "data")
	if err := os.MkdirAll(data, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(data, "in"), []byte("from the host\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h := start(t, d, cfg)
	if res := drivertest.Wait(t, h); !res.Successful() {
		t.Fatalf("exit = %+v; stderr %s", res, readFile(cfg.StderrPath))
	}
	if got := readFile(cfg.StdoutPath); got != "from the host\nbox\n" {
		t.Errorf("stdout = %q", got)
	}
	info := daemon.Inspect(t, h.State().Data["container_id"])
	host := info["HostConfig"].(map[string]any)
	for k, want := range map[string]any{"ReadonlyRootfs": true, "NetworkMode": "none",
		"Memory": float64(32 << 20), "CpuShares": float64(250), "PidsLimit": float64(64)} {
		if host[k] != want {
			t.Errorf("HostConfig.%s = %v, want %v", k, host[k], want)
		}
	}
	labels := info["Config"].(map[string]any)["Labels"].(map[string]any)
	if labels["team"] != "web" || labels[docker.LabelAllocID] != cfg.AllocID || labels[docker.LabelTaskID] != cfg.ID {
		t.Errorf("labels = %v", labels)
	}
	// Labels are readable by anyone who can list containers: nothing of
	// the task's environment (where secrets go) is in them.
	for k, v := range labels {
		if strings.Contains(v.(string), cfg.Env["GREETING"]) {
			t.Errorf("label %s carries the task's environment: %q", k, v)
		}
	}
}

// TestMountsUlimitsDevices: bind and tmpfs mounts, ulimits, devices and
// the logging block reach the container.
func TestMountsUlimitsDevices(t *testing.T) {
	d := newDriver(t, nil)
	cfg := taskConfig(t, map[string]any{"image": daemon.Image, "command": "/bin/sh",
		"args": []any{"-c", "cat /in/msg; echo tmp > /scratch/f && cat /scratch/f; ulimit -n; echo dev > /dev/xnull && echo wrote"},
		"mount": []any{
			map[string]any{"type": "bind", "source": "local", "target": "/in", "readonly": true},
			map[string]any{"type": "tmpfs", "target": "/scratch", "tmpfs_options": []any{map[string]any{"size": int64(1 << 20)}}},
		},
		"ulimit":          map[string]any{"nofile": "512:1024"},
		"devices":         []any{map[string]any{"host_path": "/dev/null", "container_path": "/dev/xnull"}},
		"logging":         []any{map[string]any{"type": "json-file", "config": []any{map[string]any{"max-size": "1m"}}}},
		"readonly_rootfs": true,
	})
	if err := os.MkdirAll(filepath.Join(cfg.Dir, "local"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfg.Dir, "local", "msg"), []byte("bound\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if res := drivertest.Wait(t, start(t, d, cfg)); !res.Successful() {
		t.Fatalf("exit = %+v; stderr %s", res, readFile(cfg.StderrPath))
	}
	if got := readFile(cfg.StdoutPath); got != "bound\ntmp\n512\nwrote\n" {
		t.Errorf("stdout = %q; stderr %q", got, readFile(cfg.StderrPath))
	}
}

// TestPrivilegedAllowed: with allow_privileged the driver asks the daemon
// for a privileged container instead of refusing the task.
func TestPrivilegedAllowed(t *testing.T) {
	d := newDriver(t, func(c *docker.Config) { c.AllowPrivileged = true })
	h, err := d.Start(context.Background(), taskConfig(t, map[string]any{"image": daemon.Image, "command": "/bin/true", "privileged": true}))
	if _, ok := errors.AsType[*driver.ConfigError](err); ok {
		t.Fatalf("Start privileged with allow_privileged = %v", err)
	}
	if err == nil {
		drivertest.Wait(t, h)
	}
	if fp := d.Fingerprint(); fp.Attributes["driver.docker.privileged.enabled"] != "true" {
		t.Errorf("Fingerprint = %+v, want privileged enabled", fp)
	}
}

// TestMemoryLimitOOM: the daemon enforces the task's memory: a task that
// goes past it is killed, and the exit says OOM.
func TestMemoryLimitOOM(t *testing.T) {
	d := newDriver(t, nil)
	cfg := taskConfig(t, map[string]any{"image": daemon.Image, "command": "/bin/dd",
		"args": []any{"if=/dev/zero", "of=/dev/null", "bs=64M", "count=1"}})
	cfg.MemoryMB = 16
	res := drivertest.Wait(t, start(t, d, cfg))
	if !res.OOMKilled || res.Signal != 9 {
		t.Fatalf("exit = %+v, want killed by SIGKILL for OOM", res)
	}
}

// TestStartRemovesEarlierAttempt: a container an earlier attempt of the
// same task left (its start never recorded) is removed, never run beside
// the new one.
func TestStartRemovesEarlierAttempt(t *testing.T) {
	d := newDriver(t, nil)
	first := taskConfig(t, sh("echo ready; exec sleep 60"))
	start(t, d, first)
	second := first
	second.ID = strings.TrimSuffix(first.ID, "-0") + "-1"
	h := start(t, d, second)
	drivertest.WaitForOutput(t, second.StdoutPath, "ready")
	ids := daemon.Containers(t, docker.LabelAllocID, first.AllocID)
	if len(ids) != 1 || ids[0] != h.State().Data["container_id"] {
		t.Fatalf("containers of the task = %v, want only the second attempt's", ids)
	}
}

// TestRecoverResumesLogs: after the driver closes (the client stops) and a
// new one recovers the task, the container's output goes on reaching the
// log file, without what was already written twice, and no second
// container starts.
func TestRecoverResumesLogs(t *testing.T) {
	cfg := taskConfig(t, sh("echo one; while [ ! -e /local/go ]; do sleep 0.05; done; echo two; exec sleep 60"))
	d1 := newDriver(t, nil)
	h1, err := d1.Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	drivertest.WaitForOutput(t, cfg.StdoutPath, "one")
	if err := d1.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfg.Dir, "local", "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	h2, err := newDriver(t, nil).Recover(context.Background(), h1.State())
	if err != nil {
		t.Fatalf("Recover: %v", err)
	}
	drivertest.WaitForOutput(t, cfg.StdoutPath, "two")
	if got := readFile(cfg.StdoutPath); got != "one\ntwo\n" {
		t.Errorf("stdout after recovery = %q, want one then two, once each", got)
	}
	if ids := daemon.Containers(t, docker.LabelAllocID, cfg.AllocID); len(ids) != 1 {
		t.Errorf("containers = %v, want one", ids)
	}
	drivertest.Stop(t, h2)
	if ids := daemon.Containers(t, docker.LabelAllocID, cfg.AllocID); len(ids) != 0 {
		t.Errorf("containers after stop = %v, want none", ids)
	}
}

// TestFingerprint: the daemon's version when it answers; unhealthy when it
// does not, undetected when its socket is not there.
func TestFingerprint(t *testing.T) {
	fp := newDriver(t, nil).Fingerprint()
	if !fp.Healthy || fp.Attributes["driver.docker.version"] == "" || fp.Attributes["driver.docker.privileged.enabled"] != "false" {
		t.Errorf("Fingerprint = %+v", fp)
	}
	missing := newDriver(t, func(c *docker.Config) { c.Endpoint = "unix://" + t.TempDir() + "/none.sock" }).Fingerprint()
	if missing.Detected || missing.Healthy {
		t.Errorf("Fingerprint with no socket = %+v", missing)
	}
	sock := filepath.Join(t.TempDir(), "mute.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	mute := newDriver(t, func(c *docker.Config) { c.Endpoint, c.FingerprintTimeout = "unix://"+sock, 100*time.Millisecond }).Fingerprint()
	if !mute.Detected || mute.Healthy {
		t.Errorf("Fingerprint of a daemon that does not answer = %+v", mute)
	}
}

func readFile(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

// TestExec: a command runs inside the task's container, with its input,
// its two output streams apart, the task's environment as the container
// sees it, and its exit code; a canceled one is killed.
func TestExec(t *testing.T) {
	d := newDriver(t, nil)
	cfg := taskConfig(t, sh("echo ready; exec sleep 60"))
	h := start(t, d, cfg)
	drivertest.WaitForOutput(t, cfg.StdoutPath, "ready")
	x := h.(driver.Execer)
	var out, errOut strings.Builder
	code, err := x.Exec(context.Background(), driver.ExecRequest{
		Command: []string{"/bin/sh", "-c", `cat; echo "$GREETING in $NOMAD_TASK_DIR"; echo bad >&2; exit 7`},
		Env:     cfg.Env, Stdin: strings.NewReader("input\n"), Stdout: &out, Stderr: &errOut})
	if err != nil || code != 7 {
		t.Fatalf("Exec = %d, %v; want 7", code, err)
	}
	if out.String() != "input\nhi there in /local\n" || errOut.String() != "bad\n" {
		t.Errorf("stdout %q, stderr %q", out.String(), errOut.String())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, err := x.Exec(ctx, driver.ExecRequest{Command: []string{"/bin/sleep", "30"}}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Exec past its context = %v", err)
	}
}

// TestImageGC: an image the driver's tasks used is removed once none has
// run it for the delay; one a running task uses is kept.
func TestImageGC(t *testing.T) {
	clk := clocktest.NewClock(time.Unix(1_800_000_000, 0))
	const delay = time.Minute
	d := newDriver(t, func(c *docker.Config) {
		c.ImageGC, c.ImageDelay, c.ImageGCInterval, c.Clock = true, delay, time.Second, clk
	})
	done, busy := daemon.Tag(t, "ordo-gc-done:1"), daemon.Tag(t, "ordo-gc-busy:1")
	exited := taskConfig(t, map[string]any{"image": done, "command": "/bin/true"})
	drivertest.Wait(t, start(t, d, exited))
	running := taskConfig(t, map[string]any{"image": busy, "command": "/bin/sh", "args": []any{"-c", "echo ready; exec sleep 60"}, "init": true})
	running.AllocID += "-busy"
	h := start(t, d, running)
	drivertest.WaitForOutput(t, running.StdoutPath, "ready")

	deadline := time.Now().Add(patience)
	for daemon.HasImage(t, done) {
		if time.Now().After(deadline) {
			t.Fatalf("image %s still there %v after its last task exited", done, delay)
		}
		clk.Advance(delay)                // past the delay, and fires the GC's timer
		time.Sleep(10 * time.Millisecond) // polling a condition with a deadline
	}
	if !daemon.HasImage(t, busy) {
		t.Fatalf("image %s of a running task was removed", busy)
	}
	drivertest.Stop(t, h)
}

// TestSweep: Sweep removes the owner's containers of allocations the
// client does not know, and nothing of another owner's or without one.
func TestSweep(t *testing.T) {
	mine := newDriver(t, func(c *docker.Config) { c.Owner = "client-" + t.Name() })
	theirs := newDriver(t, func(c *docker.Config) { c.Owner = "other-" + t.Name() })
	unowned := newDriver(t, nil)
	long := func(d *docker.Driver, suffix string) driver.TaskConfig {
		cfg := taskConfig(t, sh("echo ready; exec sleep 60"))
		cfg.AllocID += suffix
		cfg.ID = cfg.AllocID + "-web-0"
		start(t, d, cfg)
		drivertest.WaitForOutput(t, cfg.StdoutPath, "ready")
		return cfg
	}
	keep, drop, other := long(mine, "-keep"), long(mine, "-drop"), long(theirs, "-other")
	n, err := newDriver(t, func(c *docker.Config) { c.Owner = "client-" + t.Name() }).Sweep(context.Background(),
		func(id string) bool { return id == keep.AllocID })
	if err != nil || n != 1 {
		t.Fatalf("Sweep = %d, %v; want 1", n, err)
	}
	for _, c := range []struct {
		cfg  driver.TaskConfig
		want int
	}{{keep, 1}, {drop, 0}, {other, 1}} {
		if got := len(daemon.Containers(t, docker.LabelAllocID, c.cfg.AllocID)); got != c.want {
			t.Errorf("containers of %s = %d, want %d", c.cfg.AllocID, got, c.want)
		}
	}
	if n, err := unowned.Sweep(context.Background(), func(string) bool { return false }); n != 0 || err != nil {
		t.Errorf("Sweep without an owner = %d, %v", n, err)
	}
}

// TestStopWhileDaemonUnreachable: a Stop that cannot reach the daemon
// keeps trying, and stops the task once the daemon answers again; its
// context bounds it.
func TestStopWhileDaemonUnreachable(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "d.sock")
	d := newDriver(t, func(c *docker.Config) { c.Endpoint = "unix://" + sock })
	p := forward(t, sock)
	cfg := taskConfig(t, sh("echo ready; exec sleep 60"))
	h := start(t, d, cfg)
	drivertest.WaitForOutput(t, cfg.StdoutPath, "ready")
	p.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if err := h.Stop(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Stop with the daemon unreachable = %v, want the context's deadline", err)
	}
	stopped := make(chan error, 1)
	go func() { stopped <- h.Stop(context.Background()) }()
	forward(t, sock)
	select {
	case err := <-stopped:
		if err != nil {
			t.Fatalf("Stop once the daemon is back: %v", err)
		}
	case <-time.After(patience):
		t.Fatal("Stop did not end once the daemon was back")
	}
	if res := drivertest.Wait(t, h); res.Signal != 15 {
		t.Fatalf("exit = %+v, want SIGTERM", res)
	}
}

// forward serves sock as a proxy of the daemon's socket until closed,
// closing the connections through it too.
func forward(t *testing.T, sock string) io.Closer {
	t.Helper()
	os.Remove(sock)
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	f := &forwarder{ln: ln}
	target := strings.TrimPrefix(daemon.Endpoint, "unix://")
	f.wg.Go(func() {
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
			f.mu.Lock()
			f.conns = append(f.conns, in, out)
			f.mu.Unlock()
			f.wg.Go(func() { io.Copy(out, in); out.Close() })
			f.wg.Go(func() { io.Copy(in, out); in.Close() })
		}
	})
	t.Cleanup(func() { f.Close() })
	return f
}

type forwarder struct {
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
	wg    sync.WaitGroup
}

func (f *forwarder) Close() error {
	f.ln.Close()
	f.mu.Lock()
	for _, c := range f.conns {
		c.Close()
	}
	f.conns = nil
	f.mu.Unlock()
	f.wg.Wait()
	return nil
}

// TestMemoryMax: with memory_max the daemon's hard limit is memory_max and
// memory, what the task was placed by, is the soft reservation.
func TestMemoryMax(t *testing.T) {
	d := newDriver(t, func(c *docker.Config) { c.KeepContainers = true })
	cfg := taskConfig(t, map[string]any{"image": daemon.Image, "command": "/bin/true", "network_mode": "none"})
	cfg.MemoryMB, cfg.MemoryMaxMB = 32, 96
	h := start(t, d, cfg)
	drivertest.Wait(t, h)
	host := daemon.Inspect(t, h.State().Data["container_id"])["HostConfig"].(map[string]any)
	for k, want := range map[string]float64{"Memory": 96 << 20, "MemoryReservation": 32 << 20, "MemorySwap": 96 << 20} {
		if host[k] != want {
			t.Errorf("HostConfig.%s = %v, want %v", k, host[k], want)
		}
	}
}
