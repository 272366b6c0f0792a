package docker

import (
	"fmt"
	"strconv"
	"time"

	"github.com/ordoplane/ordo/client/driver"
)

// Keys of HandleState.Data.
const (
	keyContainerID = "container_id"
	keyImage       = "image"
	keyAllocID     = "alloc_id"
	keyTaskName    = "task_name"
	keyStdout      = "stdout_path"
	keyStderr      = "stderr_path"
	keyLogMaxBytes = "log_max_bytes"
	keyLogMaxFiles = "log_max_files"
	keyKillSignal  = "kill_signal"
	keyKillTimeout = "kill_timeout"
)

// task is what a handle knows of its task, and all that its state carries
// to a later client process.
type task struct {
	id        string
	allocID   string
	name      string
	started   time.Time
	container string
	// image is the image the task's container was made from.
	image       string
	logs        logSpec
	killSignal  int
	killTimeout time.Duration
}

// state renders t as a handle state.
func (t task) state() driver.HandleState {
	return driver.HandleState{
		Driver:  Name,
		TaskID:  t.id,
		Started: t.started,
		Data: map[string]string{
			keyContainerID: t.container,
			keyImage:       t.image,
			keyAllocID:     t.allocID,
			keyTaskName:    t.name,
			keyStdout:      t.logs.stdout,
			keyStderr:      t.logs.stderr,
			keyLogMaxBytes: strconv.FormatInt(t.logs.maxBytes, 10),
			keyLogMaxFiles: strconv.Itoa(t.logs.maxFiles),
			keyKillSignal:  strconv.Itoa(t.killSignal),
			keyKillTimeout: t.killTimeout.String(),
		},
	}
}

// taskFromState parses a handle state written by task.state.
func taskFromState(s driver.HandleState) (task, error) {
	if s.Driver != Name {
		return task{}, fmt.Errorf("docker: handle state of driver %q", s.Driver)
	}
	t := task{id: s.TaskID, started: s.Started, container: s.Data[keyContainerID], image: s.Data[keyImage], allocID: s.Data[keyAllocID],
		name: s.Data[keyTaskName], logs: logSpec{stdout: s.Data[keyStdout], stderr: s.Data[keyStderr]}}
	var err error
	field := func(key string, parse func(string) error) {
		if err != nil {
			return
		}
		v, ok := s.Data[key]
		if !ok {
			err = fmt.Errorf("docker: handle state of task %s lacks %s", s.TaskID, key)
			return
		}
		if perr := parse(v); perr != nil {
			err = fmt.Errorf("docker: handle state of task %s: %s: %w", s.TaskID, key, perr)
		}
	}
	field(keyLogMaxBytes, func(v string) (e error) { t.logs.maxBytes, e = strconv.ParseInt(v, 10, 64); return })
	field(keyLogMaxFiles, func(v string) (e error) { t.logs.maxFiles, e = strconv.Atoi(v); return })
	field(keyKillSignal, func(v string) (e error) { t.killSignal, e = strconv.Atoi(v); return })
	field(keyKillTimeout, func(v string) (e error) { t.killTimeout, e = time.ParseDuration(v); return })
	if err != nil {
		return task{}, err
	}
	if t.container == "" {
		return task{}, fmt.Errorf("docker: handle state of task %s names no container", s.TaskID)
	}
	t.logs.maxFiles = max(t.logs.maxFiles, 1)
	return t, nil
}
