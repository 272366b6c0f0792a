package mock

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ordoplane/ordo/client/driver"
	"github.com/ordoplane/ordo/clock"
)

// Name is the mock driver's name in a task's driver field.
const Name = "mock"

// Config configures a Driver.
type Config struct {
	// Clock drives every simulated task; default clock.System.
	Clock clock.Clock
}

// DefaultConfig returns the defaults.
func DefaultConfig() Config { return Config{Clock: clock.System{}} }

// Validate reports a Config that cannot work.
func (c Config) Validate() error {
	if c.Clock == nil {
		return errors.New("mock: Clock is required")
	}
	return nil
}

// Driver runs simulated tasks. Build it with New.
type Driver struct {
	cfg Config
}

var _ driver.Driver = (*Driver)(nil)

// New returns a Driver; zero fields of cfg take DefaultConfig's values.
func New(cfg Config) (*Driver, error) {
	if cfg.Clock == nil {
		cfg.Clock = DefaultConfig().Clock
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Driver{cfg: cfg}, nil
}

// Name implements driver.Driver.
func (d *Driver) Name() string { return Name }

// Fingerprint implements driver.Driver: always detected and healthy, with
// the attribute driver.mock = "1".
func (d *Driver) Fingerprint() driver.Fingerprint {
	return driver.Fingerprint{Detected: true, Healthy: true, Attributes: map[string]string{"driver.mock": "1"}}
}

// Start implements driver.Driver: after start_block_for it fails with
// start_error, if set, or starts a simulated task that ends run_for later.
func (d *Driver) Start(ctx context.Context, cfg driver.TaskConfig) (driver.Handle, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("mock: start task %s: %w", cfg.ID, err)
	}
	s, err := parseTask(cfg)
	if err != nil {
		return nil, fmt.Errorf("mock: start task %s: %w", cfg.ID, err)
	}
	if s.startBlockFor > 0 {
		timer := d.cfg.Clock.NewTimer(s.startBlockFor)
		select {
		case <-timer.C():
		case <-ctx.Done():
			timer.Stop()
			return nil, fmt.Errorf("mock: start task %s: %w", cfg.ID, ctx.Err())
		}
	}
	if s.startError != "" {
		return nil, fmt.Errorf("mock: start task %s: %w", cfg.ID, errors.New(s.startError))
	}
	var out *os.File
	if s.stdoutString != "" && cfg.StdoutPath != "" {
		if err := os.MkdirAll(filepath.Dir(cfg.StdoutPath), 0o755); err != nil {
			return nil, fmt.Errorf("mock: start task %s: stdout: %w", cfg.ID, err)
		}
		if out, err = os.OpenFile(cfg.StdoutPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644); err != nil {
			return nil, fmt.Errorf("mock: start task %s: stdout: %w", cfg.ID, err)
		}
	}
	h := newHandle(d, cfg.ID, d.cfg.Clock.Now(), s)
	go h.run(out)
	return h, nil
}

// Recover implements driver.Driver: a mock task is running until its
// start time plus run_for, by the driver's clock; it then ends with its
// exit code. It writes no further output.
func (d *Driver) Recover(ctx context.Context, state driver.HandleState) (driver.Handle, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("mock: recover task %s: %w", state.TaskID, err)
	}
	s, err := specFromState(state)
	if err != nil {
		return nil, err
	}
	if end := state.Started.Add(s.runFor); !d.cfg.Clock.Now().Before(end) {
		return nil, fmt.Errorf("mock: recover task %s: ended at %v: %w", state.TaskID, end, driver.ErrTaskGone)
	}
	h := newHandle(d, state.TaskID, state.Started, s)
	go h.run(nil)
	return h, nil
}
