package csi

import (
	"context"
	"fmt"
	"github.com/ordoplane/ordo/clock"
	api "github.com/ordoplane/ordo/commands/csi"
	"os"
	"path/filepath"
	"time"

	"github.com/ordoplane/ordo/client/allocrunner"
	"github.com/ordoplane/ordo/client/serverapi"
	"github.com/ordoplane/ordo/events"
)

// VolumeLookup returns a volume as the servers have it (its plugin,
// external id, context and write claims).
type VolumeLookup func(ctx context.Context, ns, id string) (*serverapi.CSIVolume, error)

// Hook is the allocation hook of CSI: it registers the allocation's
// plugin tasks with the Manager, and publishes the volumes its group
// claims before the tasks start (linking each task's volume_mount
// destination, inside its task directory, to the publication), then
// unpublishes them once the tasks are dead.
type Hook struct {
	M       *Manager
	Volumes VolumeLookup
	// Retry is how long Prerun keeps trying a publication whose plugin is
	// not ready on this node yet; default 30s.
	Retry time.Duration
	// Clock times the retries; nil means clock.System.
	Clock clock.Clock
}

var _ allocrunner.Hook = (*Hook)(nil)

func (h *Hook) clock() clock.Clock {
	if h.Clock == nil {
		return clock.System{}
	}
	return h.Clock
}

// requests returns the publications allocation a needs; with claiming
// set (before its tasks start) it also refuses volumes another job holds
// for writing (exclusive).
func (h *Hook) requests(ctx context.Context, a events.Allocation, tg *events.TaskGroup, claiming bool) (map[string]api.VolumeRequest, error) {
	out := map[string]api.VolumeRequest{}
	for name, r := range tg.Volumes {
		if r == nil || r.Type != events.VolumeTypeCSI {
			continue
		}
		id := r.Source
		if r.PerAlloc {
			id = fmt.Sprintf("%s[%s]", r.Source, allocIndex(a.Name))
		}
		vol, err := h.Volumes(ctx, a.Namespace, id)
		if err != nil {
			return nil, fmt.Errorf("csi: volume %s of group %s: %w", id, tg.Name, err)
		}
		if claiming {
			if err := exclusive(vol, r, a); err != nil {
				return nil, err
			}
		}
		access, attachment := r.AccessMode, r.AttachmentMode
		if (access == "" || attachment == "") && len(vol.RequestedCapabilities) > 0 {
			access = cmpOr(access, vol.RequestedCapabilities[0].AccessMode)
			attachment = cmpOr(attachment, vol.RequestedCapabilities[0].AttachmentMode)
		}
		out[name] = api.VolumeRequest{PluginID: vol.PluginID, Namespace: a.Namespace, VolumeID: id, ExternalID: vol.ExternalID,
			AllocID: a.ID, AccessMode: access, AttachmentMode: attachment, ReadOnly: r.ReadOnly, Context: vol.Context}
	}
	return out, nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func allocIndex(name string) string {
	for i := len(name) - 1; i >= 0; i-- {
		if name[i] == '[' && name[len(name)-1] == ']' {
			return name[i+1 : len(name)-1]
		}
	}
	return "0"
}

// Prerun implements allocrunner.Hook.
func (h *Hook) Prerun(ctx context.Context, a events.Allocation, job *events.Job, dir allocrunner.AllocDir) error {
	tg := job.Group(a.TaskGroup)
	if tg == nil {
		return nil
	}
	for i := range tg.Tasks {
		t := &tg.Tasks[i]
		if pc := t.CSIPluginConfig; pc != nil {
			sock := allocrunner.CSISocket(dir, t)
			if err := os.MkdirAll(filepath.Dir(sock), 0o755); err != nil {
				return fmt.Errorf("csi: plugin %s socket dir: %w", pc.ID, err)
			}
			if err := h.M.Register(pc.ID, pc.Type, sock, a.ID); err != nil {
				return err
			}
		}
	}
	reqs, err := h.requests(ctx, a, tg, true)
	if err != nil || len(reqs) == 0 {
		return err
	}
	retry := h.Retry
	if retry <= 0 {
		retry = 30 * time.Second
	}
	clk := h.clock()
	for name, req := range reqs {
		deadline := clk.Now().Add(retry)
		var path string
		for {
			if path, err = h.M.Publish(ctx, req); err == nil {
				break
			}
			if clk.Now().After(deadline) || ctx.Err() != nil {
				return fmt.Errorf("csi: volume %q: %w", name, err)
			}
			h.M.log.Warn("CSI publish failed: retrying", "volume", req.VolumeID, "alloc_id", a.ID, "err", err)
			select {
			case <-ctx.Done():
			case <-clk.After(500 * time.Millisecond):
			}
		}
		for j := range tg.Tasks {
			t := &tg.Tasks[j]
			for _, vm := range t.VolumeMounts {
				if vm.Volume != name {
					continue
				}
				link := filepath.Join(dir.TaskDir(t.Name), filepath.Clean("/"+vm.Destination))
				if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
					return err
				}
				_ = os.Remove(link)
				if err := os.Symlink(path, link); err != nil {
					return fmt.Errorf("csi: mount volume %q in task %s: %w", name, t.Name, err)
				}
			}
		}
	}
	return nil
}

// Postrun implements allocrunner.Hook: unpublish (the volume watcher asks
// again through the client API; both are idempotent) and deregister the
// allocation's plugins.
func (h *Hook) Postrun(ctx context.Context, a events.Allocation, job *events.Job, _ allocrunner.AllocDir) {
	tg := job.Group(a.TaskGroup)
	if tg == nil {
		return
	}
	reqs, err := h.requests(ctx, a, tg, false)
	if err != nil {
		h.M.log.Warn("CSI volumes of a stopped allocation: the servers will unpublish", "alloc_id", a.ID, "err", err)
	}
	for _, req := range reqs {
		if err := h.M.Unpublish(ctx, req); err != nil {
			h.M.log.Warn("CSI unpublish failed: the servers will retry", "volume", req.VolumeID, "alloc_id", a.ID, "err", err)
		}
	}
	for i := range tg.Tasks {
		if pc := tg.Tasks[i].CSIPluginConfig; pc != nil {
			h.M.Deregister(pc.ID, a.ID)
		}
	}
}

// exclusive refuses to publish a single-writer volume for writing while
// another job's allocation holds a write claim on it: the scheduler
// checks claims on its snapshot, but two plans racing for the volume
// could both commit, and the client is the last place to stop the second
// from writing beside the first.
func exclusive(vol *serverapi.CSIVolume, r *events.VolumeRequest, a events.Allocation) error {
	if r.ReadOnly || r.AccessMode == events.CSIAccessMultiNodeMultiW || r.AccessMode == events.CSIAccessSingleNodeReader ||
		r.AccessMode == events.CSIAccessMultiNodeReader {
		return nil
	}
	for id, c := range vol.WriteClaims {
		if id != a.ID && (c.Namespace != a.Namespace || c.JobID != a.JobID) {
			return fmt.Errorf("csi: volume %s is held for writing by allocation %s of job %s", vol.ID, id, c.JobID)
		}
	}
	return nil
}
