package mock

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ordoplane/ordo/client/driver"
)

// configKeys are the keys of a mock task's config block.
var configKeys = []string{"run_for", "exit_code", "start_error", "start_block_for", "kill_after",
	"stdout_string", "stdout_repeat", "stdout_repeat_duration"}

// spec is a mock task's behaviour.
type spec struct {
	runFor               time.Duration
	exitCode             int
	startError           string
	startBlockFor        time.Duration
	killAfter            time.Duration
	stdoutString         string
	stdoutRepeat         int
	stdoutRepeatDuration time.Duration
	killSignal           int
	killTimeout          time.Duration
}

// defaultKillTimeout is the kill timeout of a task that sets none.
const defaultKillTimeout = 5 * time.Second

// parseTask reads a task's behaviour from its config; errors are
// *driver.ConfigError naming the field.
func parseTask(cfg driver.TaskConfig) (spec, error) {
	var s spec
	for k := range cfg.Config {
		if !slices.Contains(configKeys, k) {
			return s, &driver.ConfigError{Key: "config." + k, Reason: fmt.Sprintf("unknown key (mock takes %s)", strings.Join(configKeys, ", "))}
		}
	}
	c := cfg.Config
	var err error
	for _, f := range []func() error{
		func() (e error) { s.runFor, e = duration(c, "run_for"); return },
		func() (e error) { s.exitCode, e = integer(c, "exit_code"); return },
		func() (e error) { s.startError, e = str(c, "start_error"); return },
		func() (e error) { s.startBlockFor, e = duration(c, "start_block_for"); return },
		func() (e error) { s.killAfter, e = duration(c, "kill_after"); return },
		func() (e error) { s.stdoutString, e = str(c, "stdout_string"); return },
		func() (e error) { s.stdoutRepeat, e = integer(c, "stdout_repeat"); return },
		func() (e error) { s.stdoutRepeatDuration, e = duration(c, "stdout_repeat_duration"); return },
	} {
		if err = f(); err != nil {
			return s, err
		}
	}
	if s.stdoutRepeat < 0 {
		return s, &driver.ConfigError{Key: "config.stdout_repeat", Reason: "must not be negative"}
	}
	if s.killSignal, err = driver.ParseSignal(cfg.KillSignal); err != nil {
		return s, &driver.ConfigError{Key: "kill_signal", Reason: err.Error()}
	}
	switch {
	case cfg.KillTimeout < 0:
		return s, &driver.ConfigError{Key: "kill_timeout", Reason: "must not be negative"}
	case cfg.KillTimeout == 0:
		s.killTimeout = defaultKillTimeout
	default:
		s.killTimeout = cfg.KillTimeout
	}
	return s, nil
}

// duration reads a non-negative duration written as a string ("1m30s").
func duration(c map[string]any, key string) (time.Duration, error) {
	var d time.Duration
	switch v := c[key].(type) {
	case nil:
		return 0, nil
	case time.Duration:
		d = v
	case string:
		var err error
		if d, err = time.ParseDuration(v); err != nil {
			return 0, &driver.ConfigError{Key: "config." + key, Reason: err.Error()}
		}
	default:
		return 0, &driver.ConfigError{Key: "config." + key, Reason: fmt.Sprintf("is a %T, want a duration string", v)}
	}
	if d < 0 {
		return 0, &driver.ConfigError{Key: "config." + key, Reason: "must not be negative"}
	}
	return d, nil
}

// integer reads a whole number, as HCL (int) or JSON (float64) decode it.
func integer(c map[string]any, key string) (int, error) {
	switch v := c[key].(type) {
	case nil:
		return 0, nil
	case int:
		return v, nil
	case int64:
		return int(v), nil
	case float64:
		if v == math.Trunc(v) && math.Abs(v) < math.MaxInt32 {
			return int(v), nil
		}
	}
	return 0, &driver.ConfigError{Key: "config." + key, Reason: fmt.Sprintf("%v is not a whole number", c[key])}
}

func str(c map[string]any, key string) (string, error) {
	switch v := c[key].(type) {
	case nil:
		return "", nil
	case string:
		return v, nil
	default:
		return "", &driver.ConfigError{Key: "config." + key, Reason: fmt.Sprintf("is a %T, want a string", v)}
	}
}

// Keys of HandleState.Data.
const (
	keyRunFor      = "run_for"
	keyExitCode    = "exit_code"
	keyKillAfter   = "kill_after"
	keyKillSignal  = "kill_signal"
	keyKillTimeout = "kill_timeout"
)

// state renders what Recover needs of a task: when it ends and how it
// answers Stop. Output is not carried over.
func (s spec) state(id string, started time.Time) driver.HandleState {
	return driver.HandleState{Driver: Name, TaskID: id, Started: started, Data: map[string]string{
		keyRunFor:      s.runFor.String(),
		keyExitCode:    strconv.Itoa(s.exitCode),
		keyKillAfter:   s.killAfter.String(),
		keyKillSignal:  strconv.Itoa(s.killSignal),
		keyKillTimeout: s.killTimeout.String(),
	}}
}

// specFromState parses a handle state written by spec.state.
func specFromState(st driver.HandleState) (spec, error) {
	var s spec
	if st.Driver != Name {
		return s, fmt.Errorf("mock: handle state of driver %q", st.Driver)
	}
	var err error
	field := func(key string, parse func(string) error) {
		if err != nil {
			return
		}
		v, ok := st.Data[key]
		if !ok {
			err = fmt.Errorf("mock: handle state of task %s lacks %s", st.TaskID, key)
		} else if perr := parse(v); perr != nil {
			err = fmt.Errorf("mock: handle state of task %s: %s: %w", st.TaskID, key, perr)
		}
	}
	field(keyRunFor, func(v string) (e error) { s.runFor, e = time.ParseDuration(v); return })
	field(keyExitCode, func(v string) (e error) { s.exitCode, e = strconv.Atoi(v); return })
	field(keyKillAfter, func(v string) (e error) { s.killAfter, e = time.ParseDuration(v); return })
	field(keyKillSignal, func(v string) (e error) { s.killSignal, e = strconv.Atoi(v); return })
	field(keyKillTimeout, func(v string) (e error) { s.killTimeout, e = time.ParseDuration(v); return })
	return s, err
}
