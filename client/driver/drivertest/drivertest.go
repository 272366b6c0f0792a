package drivertest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ordoplane/ordo/client/driver"
)

// Kinds of task Run asks cfgFor to describe.
const (
	// KindExit0 exits at once with code 0.
	KindExit0 = "exit0"
	// KindExit3 exits at once with code 3.
	KindExit3 = "exit3"
	// KindLong writes "ready\n" to stdout, then runs until it receives its
	// kill signal (SIGTERM), which ends it with the signal's default action.
	KindLong = "long"
	// KindIgnoreKill writes "ready\n" to stdout once it ignores SIGTERM,
	// then runs until it is killed.
	KindIgnoreKill = "ignore_kill"
	// KindBadConfig is a config Start refuses with a *driver.ConfigError.
	KindBadConfig = "bad_config"
)

// KillTimeout is the kill timeout of the tasks the suite starts.
const KillTimeout = 300 * time.Millisecond

// patience bounds every wait of the suite.
const patience = 10 * time.Second

const (
	sigkill = 9
	sigterm = 15
)

// Run runs the conformance suite against the driver newDriver builds.
func Run(t *testing.T, newDriver func() driver.Driver, cfgFor func(kind string) map[string]any) {
	s := &suite{newDriver: newDriver, cfgFor: cfgFor}
	for _, tc := range []struct {
		name string
		fn   func(*testing.T)
	}{
		{"Fingerprint", s.testFingerprint},
		{"ExitCodes", s.testExitCodes},
		{"WaitSameResultForConcurrentCallers", s.testWaitConcurrent},
		{"WaitContext", s.testWaitContext},
		{"StopSendsKillSignal", s.testStopSignal},
		{"StopKillsAfterKillTimeout", s.testStopKills},
		{"StopAfterExit", s.testStopAfterExit},
		{"StopContext", s.testStopContext},
		{"SignalUnknown", s.testSignalUnknown},
		{"State", s.testState},
		{"RecoverRunning", s.testRecoverRunning},
		{"RecoverExited", s.testRecoverExited},
		{"RecoverOtherDriver", s.testRecoverOtherDriver},
		{"BadConfig", s.testBadConfig},
		{"StartCanceled", s.testStartCanceled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t)
		})
	}
}

type suite struct {
	newDriver func() driver.Driver
	cfgFor    func(kind string) map[string]any
}

// driver returns a fresh driver, closed at the end of the test if it can be.
func (s *suite) driver(t *testing.T) driver.Driver {
	t.Helper()
	d := s.newDriver()
	if c, ok := d.(interface{ Close() error }); ok {
		t.Cleanup(func() {
			if err := c.Close(); err != nil {
				t.Errorf("close driver: %v", err)
			}
		})
	}
	return d
}

// taskConfig returns the TaskConfig of a task of kind in a new directory.
func (s *suite) taskConfig(t *testing.T, kind string) driver.TaskConfig {
	t.Helper()
	dir := t.TempDir()
	id := strings.NewReplacer("/", "-", " ", "-").Replace(t.Name())
	return driver.TaskConfig{
		AllocID:     "alloc-" + id,
		Task:        "web",
		ID:          id + "-0",
		Config:      s.cfgFor(kind),
		Env:         map[string]string{"ORDO_TASK": "web"},
		Dir:         dir,
		StdoutPath:  filepath.Join(dir, "web.stdout"),
		StderrPath:  filepath.Join(dir, "web.stderr"),
		LogMaxBytes: 1 << 20,
		LogMaxFiles: 2,
		KillTimeout: KillTimeout,
	}
}

// start starts cfg on d; the task is killed when the test ends.
func start(t *testing.T, d driver.Driver, cfg driver.TaskConfig) driver.Handle {
	t.Helper()
	h, err := d.Start(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Start %s: %v", cfg.ID, err)
	}
	t.Cleanup(func() { cleanup(t, h) })
	return h
}

// cleanup kills h if it is still running and waits for it.
func cleanup(t *testing.T, h driver.Handle) {
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	if err := h.Stop(ctx); err != nil {
		t.Errorf("cleanup: Stop: %v", err)
	}
}

// Wait waits for h to exit, failing t when it does not within the
// package's patience.
func Wait(t testing.TB, h driver.Handle) driver.ExitResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	res, err := h.Wait(ctx)
	if err != nil {
		t.Fatalf("Wait: %v", err)
	}
	return res
}

// Stop stops h and returns how long its Stop took, failing t when Stop
// fails.
func Stop(t testing.TB, h driver.Handle) time.Duration {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	begin := time.Now()
	if err := h.Stop(ctx); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	return time.Since(begin)
}

// WaitForOutput waits until the file path contains want.
func WaitForOutput(t testing.TB, path, want string) {
	t.Helper()
	deadline := time.Now().Add(patience)
	for {
		b, _ := os.ReadFile(path)
		if strings.Contains(string(b), want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: no %q after %v; it holds %q", path, want, patience, b)
		}
		time.Sleep(5 * time.Millisecond) // polling a condition with a deadline
	}
}

// running reports whether h has not exited, without blocking.
func running(h driver.Handle) bool {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := h.Wait(ctx)
	return err != nil
}

func (s *suite) testFingerprint(t *testing.T) {
	fp := s.driver(t).Fingerprint()
	if !fp.Detected || !fp.Healthy {
		t.Fatalf("Fingerprint = %+v, want detected and healthy", fp)
	}
}

func (s *suite) testExitCodes(t *testing.T) {
	d := s.driver(t)
	for kind, want := range map[string]int{KindExit0: 0, KindExit3: 3} {
		res := Wait(t, start(t, d, s.taskConfig(t, kind)))
		if res.ExitCode != want || res.Signal != 0 || res.Err != nil {
			t.Errorf("%s: exit = %+v, want code %d", kind, res, want)
		}
		if got := res.Successful(); got != (want == 0) {
			t.Errorf("%s: Successful() = %v", kind, got)
		}
	}
}

func (s *suite) testWaitConcurrent(t *testing.T) {
	cfg := s.taskConfig(t, KindLong)
	h := start(t, s.driver(t), cfg)
	WaitForOutput(t, cfg.StdoutPath, "ready")
	const callers = 8
	results := make([]driver.ExitResult, callers)
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), patience)
			defer cancel()
			var err error
			if results[i], err = h.Wait(ctx); err != nil {
				t.Errorf("caller %d: Wait: %v", i, err)
			}
		})
	}
	Stop(t, h)
	wg.Wait()
	for i, r := range results {
		if !sameResult(r, results[0]) {
			t.Errorf("caller %d got %+v, caller 0 %+v", i, r, results[0])
		}
	}
	if again := Wait(t, h); !sameResult(again, results[0]) {
		t.Errorf("Wait after exit = %+v, want %+v", again, results[0])
	}
}

func sameResult(a, b driver.ExitResult) bool {
	return a.ExitCode == b.ExitCode && a.Signal == b.Signal && errors.Is(a.Err, b.Err) && errors.Is(b.Err, a.Err)
}

func (s *suite) testWaitContext(t *testing.T) {
	cfg := s.taskConfig(t, KindLong)
	h := start(t, s.driver(t), cfg)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := h.Wait(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait(canceled) = %v, want context.Canceled", err)
	}
	if !running(h) {
		t.Fatal("task exited when a Wait was canceled")
	}
}

func (s *suite) testStopSignal(t *testing.T) {
	cfg := s.taskConfig(t, KindLong)
	cfg.KillTimeout = patience
	h := start(t, s.driver(t), cfg)
	WaitForOutput(t, cfg.StdoutPath, "ready")
	if took := Stop(t, h); took >= patience {
		t.Fatalf("Stop took %v: the kill signal did not end the task", took)
	}
	if res := Wait(t, h); res.Signal != sigterm || res.ExitCode != 128+sigterm {
		t.Fatalf("exit = %+v, want signal %d (SIGTERM) and code %d", res, sigterm, 128+sigterm)
	}
}

func (s *suite) testStopKills(t *testing.T) {
	cfg := s.taskConfig(t, KindIgnoreKill)
	h := start(t, s.driver(t), cfg)
	WaitForOutput(t, cfg.StdoutPath, "ready")
	if took := Stop(t, h); took < KillTimeout {
		t.Fatalf("Stop returned after %v, before the kill timeout %v", took, KillTimeout)
	}
	if res := Wait(t, h); res.Signal != sigkill || res.ExitCode != 128+sigkill {
		t.Fatalf("exit = %+v, want signal %d (SIGKILL) and code %d", res, sigkill, 128+sigkill)
	}
}

func (s *suite) testStopAfterExit(t *testing.T) {
	h := start(t, s.driver(t), s.taskConfig(t, KindExit0))
	want := Wait(t, h)
	Stop(t, h)
	Stop(t, h)
	if got := Wait(t, h); !sameResult(got, want) {
		t.Fatalf("Wait after Stop = %+v, want %+v", got, want)
	}
}

func (s *suite) testStopContext(t *testing.T) {
	cfg := s.taskConfig(t, KindIgnoreKill)
	cfg.KillTimeout = patience
	h := start(t, s.driver(t), cfg)
	WaitForOutput(t, cfg.StdoutPath, "ready")
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := h.Stop(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Stop with a deadline before the kill timeout = %v, want context.DeadlineExceeded", err)
	}
	if !running(h) {
		t.Fatal("task that ignores its kill signal exited before the kill timeout")
	}
	if err := h.Signal("SIGKILL"); err != nil {
		t.Fatalf("Signal(SIGKILL): %v", err)
	}
	if res := Wait(t, h); res.Signal != sigkill {
		t.Fatalf("exit after SIGKILL = %+v", res)
	}
}

func (s *suite) testSignalUnknown(t *testing.T) {
	h := start(t, s.driver(t), s.taskConfig(t, KindLong))
	if err := h.Signal("SIGNOPE"); err == nil {
		t.Fatal("Signal(SIGNOPE) succeeded")
	}
}

func (s *suite) testState(t *testing.T) {
	d := s.driver(t)
	cfg := s.taskConfig(t, KindLong)
	before := time.Now()
	st := start(t, d, cfg).State()
	if st.Driver != d.Name() || st.TaskID != cfg.ID {
		t.Errorf("State names driver %q task %q, want %q %q", st.Driver, st.TaskID, d.Name(), cfg.ID)
	}
	if st.Started.Before(before.Add(-time.Second)) || st.Started.After(time.Now().Add(time.Second)) {
		t.Errorf("State.Started = %v, want about %v", st.Started, before)
	}
}

func (s *suite) testRecoverRunning(t *testing.T) {
	cfg := s.taskConfig(t, KindLong)
	first := start(t, s.driver(t), cfg)
	WaitForOutput(t, cfg.StdoutPath, "ready")
	// A second driver stands for the client after a restart. (The first
	// handle is stopped when the test ends; a real task it shares with the
	// recovered one is stopped by then, a simulated one is not.)
	again, err := s.driver(t).Recover(context.Background(), first.State())
	if err != nil {
		t.Fatalf("Recover a running task: %v", err)
	}
	t.Cleanup(func() { cleanup(t, again) })
	if st := again.State(); st.TaskID != cfg.ID || !st.Started.Equal(first.State().Started) {
		t.Errorf("recovered State = %+v, want task %s started %v", st, cfg.ID, first.State().Started)
	}
	if !running(again) {
		t.Fatal("recovered handle reports a running task exited")
	}
	Stop(t, again)
	if res := Wait(t, again); res.Successful() {
		t.Fatalf("recovered task stopped by its kill signal exited successfully: %+v", res)
	}
}

func (s *suite) testRecoverExited(t *testing.T) {
	h := start(t, s.driver(t), s.taskConfig(t, KindExit0))
	Wait(t, h)
	if _, err := s.driver(t).Recover(context.Background(), h.State()); !errors.Is(err, driver.ErrTaskGone) {
		t.Fatalf("Recover an exited task = %v, want ErrTaskGone", err)
	}
}

func (s *suite) testRecoverOtherDriver(t *testing.T) {
	h := start(t, s.driver(t), s.taskConfig(t, KindLong))
	st := h.State()
	st.Driver = "not-" + st.Driver
	if got, err := s.driver(t).Recover(context.Background(), st); err == nil {
		cleanup(t, got)
		t.Fatal("Recover accepted another driver's handle state")
	}
}

func (s *suite) testBadConfig(t *testing.T) {
	_, err := s.driver(t).Start(context.Background(), s.taskConfig(t, KindBadConfig))
	var ce *driver.ConfigError
	if !errors.As(err, &ce) || ce.Key == "" {
		t.Fatalf("Start with a bad config = %v, want a *driver.ConfigError naming the key", err)
	}
}

func (s *suite) testStartCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if h, err := s.driver(t).Start(ctx, s.taskConfig(t, KindLong)); err == nil {
		cleanup(t, h)
		t.Fatal("Start with a canceled context succeeded")
	}
}
