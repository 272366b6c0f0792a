package exec

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	osexec "os/exec"
	"sync"
	"time"

	"github.com/ordoplane/ordo/client/driver"
	"github.com/ordoplane/ordo/clock"
)

// Name is the exec driver's name in a task's driver field.
const Name = "exec"

var (
	// ErrExitUnknown is set in the ExitResult of a recovered task: the
	// process was started by an earlier client process, so this one is not
	// its parent and cannot learn how it exited.
	ErrExitUnknown = errors.New("exec: task exited while not a child of this client; exit status unknown")
	// ErrClosed is returned by Start and Recover after Close.
	ErrClosed = errors.New("exec: driver is closed")
)

// Config configures a Driver.
type Config struct {
	// Clock times kill timeouts, process polls and log checks; default
	// clock.System.
	Clock clock.Clock
	// PollInterval is how often a recovered task's process is checked for
	// exit; default 1s.
	PollInterval time.Duration
	// LogCheckInterval is how often a running task's log files are
	// compared with its LogMaxBytes; default 1s.
	LogCheckInterval time.Duration
	// Logger receives log rotation and polling failures; default
	// slog.Default().
	Logger *slog.Logger
}

// DefaultConfig returns the defaults.
func DefaultConfig() Config {
	return Config{Clock: clock.System{}, PollInterval: time.Second, LogCheckInterval: time.Second, Logger: slog.Default()}
}

// Validate reports a Config that cannot work.
func (c Config) Validate() error {
	switch {
	case c.Clock == nil:
		return errors.New("exec: Clock is required")
	case c.Logger == nil:
		return errors.New("exec: Logger is required")
	case c.PollInterval <= 0, c.LogCheckInterval <= 0:
		return errors.New("exec: PollInterval and LogCheckInterval must be positive")
	}
	return nil
}

// Driver runs tasks as processes of the host. Build it with New.
type Driver struct {
	cfg Config
	// boot is the kernel's boot id, part of a process's identity.
	boot    string
	closing chan struct{}
	// watchers counts the goroutines Close stops: log rotators and the
	// pollers of recovered tasks.
	watchers sync.WaitGroup
	mu       struct {
		sync.Mutex
		closed bool
	}
}

var _ driver.Driver = (*Driver)(nil)

// New returns a Driver; zero fields of cfg take DefaultConfig's values.
func New(cfg Config) (*Driver, error) {
	def := DefaultConfig()
	if cfg.Clock == nil {
		cfg.Clock = def.Clock
	}
	if cfg.PollInterval == 0 {
		cfg.PollInterval = def.PollInterval
	}
	if cfg.LogCheckInterval == 0 {
		cfg.LogCheckInterval = def.LogCheckInterval
	}
	if cfg.Logger == nil {
		cfg.Logger = def.Logger
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	d := &Driver{cfg: cfg, closing: make(chan struct{})}
	if supported {
		boot, err := bootID()
		if err != nil {
			return nil, fmt.Errorf("exec: %w", err)
		}
		d.boot = boot
	}
	return d, nil
}

// Name implements driver.Driver.
func (d *Driver) Name() string { return Name }

// Fingerprint implements driver.Driver: detected and healthy on Linux,
// with the attribute driver.exec = "1".
func (d *Driver) Fingerprint() driver.Fingerprint {
	if !supported {
		return driver.Fingerprint{}
	}
	_, err := procStat(os.Getpid())
	return driver.Fingerprint{Detected: true, Healthy: err == nil, Attributes: map[string]string{"driver.exec": "1"}}
}

// Close stops the driver's goroutines — log rotation and the polling of
// recovered tasks — and waits for them, leaving every task running: it is
// what a client shutting down without stopping its tasks calls, so that a
// later client process can Recover them. Handles of recovered tasks stop
// noticing their exit. Start and Recover fail after Close.
func (d *Driver) Close() error {
	d.mu.Lock()
	if !d.mu.closed {
		d.mu.closed = true
		close(d.closing)
	}
	d.mu.Unlock()
	d.watchers.Wait()
	return nil
}

// addWatchers reserves n watcher goroutines; false once closed.
func (d *Driver) addWatchers(n int) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.mu.closed {
		return false
	}
	d.watchers.Add(n)
	return true
}

// Start implements driver.Driver: it starts cfg's command in a process
// group of its own, its output appended to the task's log files.
func (d *Driver) Start(ctx context.Context, cfg driver.TaskConfig) (driver.Handle, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("exec: start task %s: %w", cfg.ID, err)
	}
	if !supported {
		return nil, fmt.Errorf("exec: start task %s: only Linux is supported", cfg.ID)
	}
	l, err := parseTask(cfg)
	if err != nil {
		return nil, fmt.Errorf("exec: start task %s: %w", cfg.ID, err)
	}
	path, err := lookPath(l.command, cfg.Dir, l.env)
	if err != nil {
		return nil, fmt.Errorf("exec: start task %s: %w", cfg.ID, err)
	}
	stdout, err := openLog(l.logs.stdout)
	if err != nil {
		return nil, fmt.Errorf("exec: start task %s: stdout: %w", cfg.ID, err)
	}
	defer stdout.Close()
	stderr, err := openLog(l.logs.stderr)
	if err != nil {
		return nil, fmt.Errorf("exec: start task %s: stderr: %w", cfg.ID, err)
	}
	defer stderr.Close()
	if !d.addWatchers(1) {
		return nil, fmt.Errorf("exec: start task %s: %w", cfg.ID, ErrClosed)
	}
	cmd := &osexec.Cmd{
		Path:        path,
		Args:        append([]string{l.command}, l.args...),
		Env:         l.env,
		Dir:         cfg.Dir,
		Stdout:      stdout,
		Stderr:      stderr,
		SysProcAttr: sysProcAttr(),
	}
	if err := cmd.Start(); err != nil {
		d.watchers.Done()
		return nil, fmt.Errorf("exec: start task %s: %w", cfg.ID, err)
	}
	pid := cmd.Process.Pid
	// The child is not reaped until waitChild runs, so its stat is there.
	info, err := procStat(pid)
	if err == nil && l.addressSpace > 0 {
		err = setAddressSpace(pid, l.addressSpace)
	}
	if err != nil {
		_ = signalProcess(pid, sigkill, true)
		_, _ = cmd.Process.Wait()
		d.watchers.Done()
		return nil, fmt.Errorf("exec: start task %s: %w", cfg.ID, err)
	}
	h := newHandle(d, task{
		id:          cfg.ID,
		started:     d.cfg.Clock.Now(),
		pid:         pid,
		startTicks:  info.startTicks,
		bootID:      d.boot,
		logs:        l.logs,
		killSignal:  l.killSignal,
		killTimeout: l.killTimeout,
	}, cmd.Process)
	go h.waitChild()
	go h.rotateLogs()
	return h, nil
}

// Recover implements driver.Driver: it re-attaches to the process a
// handle state names if that very process (same pid, same start time, same
// boot) is still running, and polls it for exit since it is not this
// client's child.
func (d *Driver) Recover(ctx context.Context, state driver.HandleState) (driver.Handle, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("exec: recover task %s: %w", state.TaskID, err)
	}
	t, err := taskFromState(state)
	if err != nil {
		return nil, err
	}
	if t.bootID != d.boot {
		return nil, fmt.Errorf("exec: recover task %s: started before the host rebooted: %w", t.id, driver.ErrTaskGone)
	}
	info, err := procStat(t.pid)
	switch {
	case errors.Is(err, errNoProcess):
		return nil, fmt.Errorf("exec: recover task %s: pid %d is gone: %w", t.id, t.pid, driver.ErrTaskGone)
	case err != nil:
		return nil, fmt.Errorf("exec: recover task %s: %w", t.id, err)
	case info.exited():
		return nil, fmt.Errorf("exec: recover task %s: pid %d has exited: %w", t.id, t.pid, driver.ErrTaskGone)
	case info.startTicks != t.startTicks:
		return nil, fmt.Errorf("exec: recover task %s: pid %d now belongs to another process: %w", t.id, t.pid, driver.ErrTaskGone)
	}
	if !d.addWatchers(2) {
		return nil, fmt.Errorf("exec: recover task %s: %w", t.id, ErrClosed)
	}
	h := newHandle(d, t, nil)
	go h.watch()
	go h.rotateLogs()
	return h, nil
}
