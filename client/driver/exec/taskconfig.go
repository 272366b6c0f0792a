package exec

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/ordoplane/ordo/client/driver"
)

// defaultPath is the PATH a task gets when its environment has none.
const defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// defaultKillTimeout is the kill timeout of a task that sets none.
const defaultKillTimeout = 5 * time.Second

// configKeys are the keys of an exec task's config block.
var configKeys = []string{"command", "args", "memory_hard_limit"}

// launch is a task's configuration checked and resolved for starting it.
type launch struct {
	command string
	args    []string
	env     []string
	// addressSpace is the RLIMIT_AS to apply in bytes; 0 for none.
	addressSpace uint64
	logs         logSpec
	killSignal   int
	killTimeout  time.Duration
}

// parseTask checks cfg and returns what Start needs; configuration errors
// are *driver.ConfigError naming the field.
func parseTask(cfg driver.TaskConfig) (launch, error) {
	var l launch
	for k := range cfg.Config {
		if !slices.Contains(configKeys, k) {
			return l, &driver.ConfigError{Key: "config." + k, Reason: fmt.Sprintf("unknown key (exec takes %s)", strings.Join(configKeys, ", "))}
		}
	}
	switch c := cfg.Config["command"].(type) {
	case nil:
		return l, &driver.ConfigError{Key: "config.command", Reason: "required"}
	case string:
		if c == "" {
			return l, &driver.ConfigError{Key: "config.command", Reason: "must not be empty"}
		}
		l.command = c
	default:
		return l, &driver.ConfigError{Key: "config.command", Reason: fmt.Sprintf("is a %T, want a string", c)}
	}
	switch a := cfg.Config["args"].(type) {
	case nil:
	case []string:
		l.args = slices.Clone(a)
	case []any:
		for i, v := range a {
			s, ok := v.(string)
			if !ok {
				return l, &driver.ConfigError{Key: "config.args", Reason: fmt.Sprintf("element %d is a %T, want a string", i, v)}
			}
			l.args = append(l.args, s)
		}
	default:
		return l, &driver.ConfigError{Key: "config.args", Reason: fmt.Sprintf("is a %T, want a list of strings", a)}
	}
	switch m := cfg.Config["memory_hard_limit"].(type) {
	case nil:
	case bool:
		if !m {
			break
		}
		if cfg.MemoryMB <= 0 {
			return l, &driver.ConfigError{Key: "config.memory_hard_limit", Reason: "needs the task's memory resource to be set"}
		}
		l.addressSpace = uint64(cfg.MemoryMB) << 20
	default:
		return l, &driver.ConfigError{Key: "config.memory_hard_limit", Reason: fmt.Sprintf("is a %T, want a bool", m)}
	}
	sig, err := driver.ParseSignal(cfg.KillSignal)
	if err != nil {
		return l, &driver.ConfigError{Key: "kill_signal", Reason: err.Error()}
	}
	l.killSignal = sig
	switch {
	case cfg.KillTimeout < 0:
		return l, &driver.ConfigError{Key: "kill_timeout", Reason: "must not be negative"}
	case cfg.KillTimeout == 0:
		l.killTimeout = defaultKillTimeout
	default:
		l.killTimeout = cfg.KillTimeout
	}
	if cfg.LogMaxBytes < 0 {
		return l, &driver.ConfigError{Key: "logs.max_file_size", Reason: "must not be negative"}
	}
	l.logs = logSpec{stdout: cfg.StdoutPath, stderr: cfg.StderrPath, maxBytes: cfg.LogMaxBytes, maxFiles: max(cfg.LogMaxFiles, 1)}
	l.env = environ(cfg.Env)
	return l, nil
}

// environ renders env as KEY=value lines in key order, adding PATH when
// env has none.
func environ(env map[string]string) []string {
	out := make([]string, 0, len(env)+1)
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	if _, ok := env["PATH"]; !ok {
		out = append(out, "PATH="+defaultPath)
	}
	sort.Strings(out)
	return out
}

// lookPath resolves command as the task sees it: a name with a slash is a
// path (relative to the task's directory), a bare name is searched in the
// task's PATH, not the client's.
func lookPath(command, dir string, env []string) (string, error) {
	if strings.Contains(command, "/") {
		p := command
		if !filepath.IsAbs(p) && dir != "" {
			p = filepath.Join(dir, p)
		}
		if err := executable(p); err != nil {
			return "", fmt.Errorf("command %q: %w", command, err)
		}
		return p, nil
	}
	path := defaultPath
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	for _, d := range filepath.SplitList(path) {
		if !filepath.IsAbs(d) {
			continue
		}
		p := filepath.Join(d, command)
		if executable(p) == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("command %q not found in the task's PATH %q", command, path)
}

// executable reports why p is not an executable regular file.
func executable(p string) error {
	fi, err := os.Stat(p)
	switch {
	case err != nil:
		return err
	case !fi.Mode().IsRegular():
		return fmt.Errorf("%s is not a regular file", p)
	case fi.Mode().Perm()&0o111 == 0:
		return fmt.Errorf("%s is not executable", p)
	}
	return nil
}
