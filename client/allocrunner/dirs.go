package allocrunner

import (
	"fmt"
	"os"
	"path/filepath"
)

// SharedDir is the name of an allocation's directory shared by its tasks.
const SharedDir = "alloc"

// AllocDir is the layout of one allocation's directory:
//
//	<root>/<alloc-id>/alloc/              shared by the tasks (NOMAD_ALLOC_DIR)
//	<root>/<alloc-id>/alloc/logs/<task>.stdout and .stderr
//	<root>/<alloc-id>/alloc/data/
//	<root>/<alloc-id>/alloc/tmp/
//	<root>/<alloc-id>/<task>/             the task's working directory
//	<root>/<alloc-id>/<task>/local/       (NOMAD_TASK_DIR)
//	<root>/<alloc-id>/<task>/secrets/     mode 0700 (NOMAD_SECRETS_DIR)
//	<root>/<alloc-id>/<task>/tmp/
type AllocDir struct {
	// Dir is <root>/<alloc-id>.
	Dir string
}

// NewAllocDir returns the layout of allocation id under root.
func NewAllocDir(root, id string) AllocDir { return AllocDir{Dir: filepath.Join(root, id)} }

// Shared returns the shared directory.
func (d AllocDir) Shared() string { return filepath.Join(d.Dir, SharedDir) }

// LogDir returns the directory of the tasks' logs.
func (d AllocDir) LogDir() string { return filepath.Join(d.Dir, SharedDir, "logs") }

// Stdout returns the path of task's stdout log.
func (d AllocDir) Stdout(task string) string { return filepath.Join(d.LogDir(), task+".stdout") }

// Stderr returns the path of task's stderr log.
func (d AllocDir) Stderr(task string) string { return filepath.Join(d.LogDir(), task+".stderr") }

// TaskDir returns task's working directory.
func (d AllocDir) TaskDir(task string) string { return filepath.Join(d.Dir, task) }

// Build creates the shared directories.
func (d AllocDir) Build() error {
	for _, p := range []string{d.Shared(), d.LogDir(), filepath.Join(d.Shared(), "data"), filepath.Join(d.Shared(), "tmp")} {
		if err := os.MkdirAll(p, 0o755); err != nil {
			return fmt.Errorf("alloc dir: %w", err)
		}
	}
	return nil
}

// BuildTask creates task's directories.
func (d AllocDir) BuildTask(task string) error {
	if task == SharedDir || task == "" || filepath.Base(task) != task {
		return fmt.Errorf("task name %q cannot name a task directory", task)
	}
	td := d.TaskDir(task)
	for _, p := range []string{td, filepath.Join(td, "local"), filepath.Join(td, "tmp")} {
		if err := os.MkdirAll(p, 0o755); err != nil {
			return fmt.Errorf("task dir: %w", err)
		}
	}
	if err := os.MkdirAll(filepath.Join(td, "secrets"), 0o700); err != nil {
		return fmt.Errorf("task dir: %w", err)
	}
	return nil
}

// Remove deletes the allocation's directory.
func (d AllocDir) Remove() error {
	if err := os.RemoveAll(d.Dir); err != nil {
		return fmt.Errorf("remove alloc dir: %w", err)
	}
	return nil
}
