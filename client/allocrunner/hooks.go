package allocrunner

import (
	"context"
	"path/filepath"

	"github.com/ordoplane/ordo/events"
)

// Hook runs around an allocation's tasks (the CSI volumes and plugins of
// client/csi use it).
type Hook interface {
	// Prerun runs after the allocation's directory is built and before
	// any task starts, also when a restarted client re-attaches; an error
	// fails every task's setup.
	Prerun(ctx context.Context, a events.Allocation, job *events.Job, dir AllocDir) error
	// Postrun runs once every task is dead for good (not when the client
	// merely stops and leaves the tasks running).
	Postrun(ctx context.Context, a events.Allocation, job *events.Job, dir AllocDir)
}

// CSISocket returns where a csi_plugin task serves its plugin: the
// socket in its mount_dir, inside its task directory. The task gets it
// as CSI_ENDPOINT (unix://…).
func CSISocket(dir AllocDir, t *events.Task) string {
	md := "csi"
	if t.CSIPluginConfig != nil && t.CSIPluginConfig.MountDir != "" {
		md = t.CSIPluginConfig.MountDir
	}
	return filepath.Join(dir.TaskDir(t.Name), filepath.Clean("/"+md), "csi.sock")
}

// prerun runs the hooks' Prerun in order.
func (r *Runner) prerun(ctx context.Context) error {
	if len(r.cfg.Hooks) == 0 {
		return nil
	}
	r.mu.Lock()
	a, job := r.mu.rec.Alloc, r.mu.rec.Job
	r.mu.Unlock()
	for _, h := range r.cfg.Hooks {
		if err := h.Prerun(ctx, a, job, r.dir); err != nil {
			return err
		}
	}
	return nil
}

// postrun runs the hooks' Postrun in reverse order.
func (r *Runner) postrun(ctx context.Context) {
	if len(r.cfg.Hooks) == 0 {
		return
	}
	r.mu.Lock()
	a, job := r.mu.rec.Alloc, r.mu.rec.Job
	r.mu.Unlock()
	for i := len(r.cfg.Hooks) - 1; i >= 0; i-- {
		r.cfg.Hooks[i].Postrun(ctx, a, job, r.dir)
	}
}
