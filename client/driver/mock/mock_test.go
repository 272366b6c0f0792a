package mock_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ordoplane/ordo/client/driver"
	"github.com/ordoplane/ordo/client/driver/drivertest"
	"github.com/ordoplane/ordo/client/driver/mock"
	"github.com/ordoplane/ordo/clock"
	"github.com/ordoplane/ordo/clock/clocktest"
)

func newDriver(t *testing.T, clock clock.Clock) *mock.Driver {
	t.Helper()
	d, err := mock.New(mock.Config{Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestConformance(t *testing.T) {
	drivertest.Run(t, func() driver.Driver { return newDriver(t, nil) }, func(kind string) map[string]any {
		switch kind {
		case drivertest.KindExit0:
			return map[string]any{}
		case drivertest.KindExit3:
			return map[string]any{"exit_code": 3}
		case drivertest.KindLong:
			return map[string]any{"run_for": "1h", "stdout_string": "ready\n"}
		case drivertest.KindIgnoreKill:
			return map[string]any{"run_for": "1h", "kill_after": "1h", "stdout_string": "ready\n"}
		case drivertest.KindBadConfig:
			return map[string]any{"run_for": "soon"}
		}
		t.Fatalf("unknown kind %q", kind)
		return nil
	})
}

func taskConfig(t *testing.T, config map[string]any) driver.TaskConfig {
	dir := t.TempDir()
	return driver.TaskConfig{
		AllocID:     "a1",
		Task:        "web",
		ID:          "a1-web-0",
		Config:      config,
		Dir:         dir,
		StdoutPath:  filepath.Join(dir, "web.stdout"),
		StderrPath:  filepath.Join(dir, "web.stderr"),
		KillTimeout: 10 * time.Second,
	}
}

func start(t *testing.T, d driver.Driver, cfg driver.TaskConfig) driver.Handle {
	t.Helper()
	h, err := d.Start(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	return h
}

// running reports whether h has not exited, once every goroutine of the
// bubble is blocked.
func running(h driver.Handle) bool {
	synctest.Wait()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := h.Wait(ctx)
	return err != nil
}

func wait(t *testing.T, h driver.Handle) driver.ExitResult {
	t.Helper()
	res, err := h.Wait(context.Background())
	if err != nil {
		t.Fatalf("Wait: %v", err)
	}
	return res
}

func TestRunForAndExitCode(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := newDriver(t, nil)
		begin := time.Now()
		h := start(t, d, taskConfig(t, map[string]any{"run_for": "10s", "exit_code": 7}))
		time.Sleep(10*time.Second - time.Nanosecond)
		if !running(h) {
			t.Fatal("task exited before run_for")
		}
		res := wait(t, h)
		if took := time.Since(begin); took != 10*time.Second {
			t.Errorf("task ran %v, want run_for 10s", took)
		}
		if res != (driver.ExitResult{ExitCode: 7}) {
			t.Errorf("exit = %+v, want code 7", res)
		}

		begin = time.Now()
		res = wait(t, start(t, d, taskConfig(t, map[string]any{"exit_code": float64(0)})))
		if time.Since(begin) != 0 || !res.Successful() {
			t.Errorf("run_for 0: exit %+v after %v, want 0 at once", res, time.Since(begin))
		}
	})
}

func TestStartBlockForAndStartError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := newDriver(t, nil)
		begin := time.Now()
		h := start(t, d, taskConfig(t, map[string]any{"start_block_for": "5s", "run_for": "1s"}))
		if took := time.Since(begin); took != 5*time.Second {
			t.Errorf("Start took %v, want start_block_for 5s", took)
		}
		wait(t, h)

		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		begin = time.Now()
		if _, err := d.Start(ctx, taskConfig(t, map[string]any{"start_block_for": "5s"})); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Start cut short by its context = %v", err)
		}
		if took := time.Since(begin); took != 2*time.Second {
			t.Errorf("Start cut short after %v, want 2s", took)
		}

		begin = time.Now()
		cfg := taskConfig(t, map[string]any{"start_error": "no such image", "start_block_for": "1s", "stdout_string": "x"})
		_, err := d.Start(context.Background(), cfg)
		var ce *driver.ConfigError
		if err == nil || !strings.Contains(err.Error(), "no such image") || errors.As(err, &ce) {
			t.Errorf("Start with start_error = %v", err)
		}
		if took := time.Since(begin); took != time.Second {
			t.Errorf("failing Start took %v, want start_block_for 1s", took)
		}
		if _, err := os.Stat(cfg.StdoutPath); err == nil {
			t.Error("a task that failed to start wrote output")
		}
	})
}

func TestKillAfter(t *testing.T) {
	for _, tc := range []struct {
		name       string
		killAfter  string
		killSignal string
		wantTook   time.Duration
		wantSignal int
	}{
		{"dies of its kill signal at once", "0s", "", 0, 15},
		{"dies kill_after later", "3s", "", 3 * time.Second, 15},
		{"configured kill signal", "3s", "SIGINT", 3 * time.Second, 2},
		{"killed after the kill timeout", "30s", "", 10 * time.Second, 9},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cfg := taskConfig(t, map[string]any{"run_for": "1h", "kill_after": tc.killAfter})
				cfg.KillSignal = tc.killSignal
				h := start(t, newDriver(t, nil), cfg)
				begin := time.Now()
				if err := h.Stop(context.Background()); err != nil {
					t.Fatal(err)
				}
				if took := time.Since(begin); took != tc.wantTook {
					t.Errorf("Stop took %v, want %v", took, tc.wantTook)
				}
				if res := wait(t, h); res != (driver.ExitResult{ExitCode: 128 + tc.wantSignal, Signal: tc.wantSignal}) {
					t.Errorf("exit = %+v, want signal %d", res, tc.wantSignal)
				}
			})
		})
	}
}

func TestSignals(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, newDriver(t, nil), taskConfig(t, map[string]any{"run_for": "1h", "kill_after": "2s"}))
		if err := h.Signal("SIGHUP"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Minute)
		if !running(h) {
			t.Fatal("SIGHUP ended the task")
		}
		begin := time.Now()
		if err := h.Signal("TERM"); err != nil {
			t.Fatal(err)
		}
		if res := wait(t, h); res.Signal != 15 || time.Since(begin) != 2*time.Second {
			t.Fatalf("exit %+v after %v, want SIGTERM after kill_after 2s", res, time.Since(begin))
		}
		if err := h.Signal("SIGHUP"); err == nil {
			t.Fatal("Signal after exit succeeded")
		}
		if err := h.Stop(context.Background()); err != nil {
			t.Fatalf("Stop after exit: %v", err)
		}
	})
}

func TestStdout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := newDriver(t, nil)
		cfg := taskConfig(t, map[string]any{"run_for": "1h", "stdout_string": "tick\n", "stdout_repeat": 3, "stdout_repeat_duration": "1s"})
		h := start(t, d, cfg)
		lines := func() int {
			synctest.Wait()
			b, _ := os.ReadFile(cfg.StdoutPath)
			return strings.Count(string(b), "tick\n")
		}
		if n := lines(); n != 1 {
			t.Errorf("at start: %d lines, want 1", n)
		}
		time.Sleep(1500 * time.Millisecond)
		if n := lines(); n != 2 {
			t.Errorf("after 1.5s: %d lines, want 2", n)
		}
		time.Sleep(time.Minute)
		if n := lines(); n != 4 {
			t.Errorf("after a minute: %d lines, want 1 + stdout_repeat 3", n)
		}
		if err := h.Stop(context.Background()); err != nil {
			t.Fatal(err)
		}

		// The task stops writing when it exits.
		cfg = taskConfig(t, map[string]any{"run_for": "2500ms", "stdout_string": "tick\n", "stdout_repeat": 10, "stdout_repeat_duration": "1s"})
		wait(t, start(t, d, cfg))
		time.Sleep(time.Minute)
		if n := lines(); n != 3 {
			t.Errorf("task that ran 2.5s: %d lines, want 3", n)
		}
	})
}

func TestRecover(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		begin := time.Now()
		cfg := taskConfig(t, map[string]any{"run_for": "10s", "exit_code": 2, "kill_after": "1s"})
		first := start(t, newDriver(t, nil), cfg)
		state := first.State()
		time.Sleep(4 * time.Second)

		// A new client process re-attaches: the task ends at started + run_for.
		h, err := newDriver(t, nil).Recover(context.Background(), state)
		if err != nil {
			t.Fatal(err)
		}
		if res := wait(t, h); res.ExitCode != 2 || time.Since(begin) != 10*time.Second {
			t.Fatalf("recovered task: exit %+v at %v, want code 2 at run_for 10s", res, time.Since(begin))
		}
		if _, err := newDriver(t, nil).Recover(context.Background(), state); !errors.Is(err, driver.ErrTaskGone) {
			t.Fatalf("Recover at started+run_for = %v, want ErrTaskGone", err)
		}

		// A recovered task keeps its kill settings.
		cfg.Config["run_for"] = "1h"
		second := start(t, newDriver(t, nil), cfg)
		defer second.Signal("SIGKILL")
		state = second.State()
		h, err = newDriver(t, nil).Recover(context.Background(), state)
		if err != nil {
			t.Fatal(err)
		}
		stopped := time.Now()
		if err := h.Stop(context.Background()); err != nil || time.Since(stopped) != time.Second {
			t.Fatalf("Stop of a recovered task: %v after %v, want kill_after 1s", err, time.Since(stopped))
		}

		bad := state
		bad.Data = map[string]string{"run_for": "1h"}
		if _, err := newDriver(t, nil).Recover(context.Background(), bad); err == nil || errors.Is(err, driver.ErrTaskGone) {
			t.Fatalf("Recover of a malformed state = %v", err)
		}
	})
}

func TestBadConfig(t *testing.T) {
	for _, tc := range []struct {
		key   string
		value any
	}{
		{"run_for", "soon"},
		{"run_for", 10},
		{"run_for", "-1s"},
		{"exit_code", "one"},
		{"exit_code", 1.5},
		{"start_error", 5},
		{"start_block_for", "x"},
		{"kill_after", true},
		{"stdout_string", []any{"a"}},
		{"stdout_repeat", -1},
		{"stdout_repeat_duration", "1 second"},
		{"runfor", "1s"},
	} {
		_, err := newDriver(t, nil).Start(context.Background(), taskConfig(t, map[string]any{tc.key: tc.value}))
		var ce *driver.ConfigError
		if !errors.As(err, &ce) || ce.Key != "config."+tc.key {
			t.Errorf("%s = %#v: Start = %v, want a ConfigError naming config.%s", tc.key, tc.value, err, tc.key)
		}
	}
	cfg := taskConfig(t, nil)
	cfg.KillSignal = "SIGSTOP"
	_, err := newDriver(t, nil).Start(context.Background(), cfg)
	var ce *driver.ConfigError
	if !errors.As(err, &ce) || ce.Key != "kill_signal" {
		t.Errorf("kill signal SIGSTOP: Start = %v, want a ConfigError naming kill_signal", err)
	}
}

func TestFingerprint(t *testing.T) {
	if fp := newDriver(t, nil).Fingerprint(); !fp.Detected || !fp.Healthy || fp.Attributes["driver.mock"] != "1" {
		t.Fatalf("Fingerprint = %+v", fp)
	}
}

// TestInjectedClock runs a task on a hand-driven clock, as a simulation
// does.
func TestInjectedClock(t *testing.T) {
	clock := clocktest.NewClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	d := newDriver(t, clock)
	h := start(t, d, taskConfig(t, map[string]any{"run_for": "1m", "exit_code": 5}))
	if st := h.State(); !st.Started.Equal(clock.Now()) {
		t.Errorf("Started = %v, want the fake clock's %v", st.Started, clock.Now())
	}
	// The task's goroutine sets its exit timer from the clock's reading:
	// advance only once it has, or the timer would start after the move.
	clock.BlockUntilWaiters(1)
	clock.Advance(59 * time.Second)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := h.Wait(ctx); err == nil {
		t.Fatal("task exited before run_for on the fake clock")
	}
	clock.Advance(time.Second)
	ctx, cancel = context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if res, err := h.Wait(ctx); err != nil || res.ExitCode != 5 {
		t.Fatalf("Wait = %+v, %v; want code 5 once the fake clock reached run_for", res, err)
	}
	if _, err := d.Recover(context.Background(), h.State()); !errors.Is(err, driver.ErrTaskGone) {
		t.Fatalf("Recover after run_for on the fake clock = %v", err)
	}
}
