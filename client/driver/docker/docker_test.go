package docker_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ordoplane/ordo/client/driver"
	"github.com/ordoplane/ordo/client/driver/docker"
	"github.com/ordoplane/ordo/client/driver/docker/dockertest"
	"github.com/ordoplane/ordo/client/driver/drivertest"
)

// daemon is the package's own dockerd, started by TestMain.
var daemon *dockertest.Daemon

func TestMain(m *testing.M) { os.Exit(dockertest.Main(m, &daemon)) }

// patience bounds the tests' waits on conditions.
const patience = 20 * time.Second

func newDriver(t *testing.T, mod func(*docker.Config)) *docker.Driver {
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
func taskConfig(t *testing.T, config map[string]any) driver.TaskConfig {
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
