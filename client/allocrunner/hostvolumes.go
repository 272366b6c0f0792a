package allocrunner

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/ordoplane/ordo/events"
)

// VolumeTypeHost is the type of a group volume the node offers as a host
// directory (client config host_volume).
const VolumeTypeHost = "host"

// mountHostVolumes makes each host volume the task mounts reachable at
// its destination in the task directory: a symbolic link to the node's
// host volume path (the exec driver runs host processes, so a link is
// what they can follow). A destination is relative to the task
// directory; an absolute one is mapped under it, as the chroot of
// Nomad's exec driver would see it. read_only cannot be enforced this way
// (docs/client.md).
func (tr *taskRunner) mountHostVolumes() error {
	if len(tr.task.VolumeMounts) == 0 {
		return nil
	}
	r := tr.r
	r.mu.Lock()
	tg := r.groupLocked()
	r.mu.Unlock()
	if tg == nil {
		return nil
	}
	td := r.dir.TaskDir(tr.task.Name)
	for _, vm := range tr.task.VolumeMounts {
		req := tg.Volumes[vm.Volume]
		if req == nil || req.Type != VolumeTypeHost {
			continue // a CSI volume: client/csi links it
		}
		var hv *events.ClientHostVolume
		if n := r.cfg.Node; n != nil {
			hv = n.HostVolumes[req.Source]
		}
		if hv == nil || hv.Path == "" {
			return fmt.Errorf("volume %q: host volume %q is not on this node", vm.Volume, req.Source)
		}
		link := filepath.Join(td, filepath.Clean("/"+vm.Destination))
		if link == td {
			return fmt.Errorf("volume %q: destination %q is the task directory itself", vm.Volume, vm.Destination)
		}
		if cur, err := os.Readlink(link); err == nil && cur == hv.Path {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
			return fmt.Errorf("volume %q: %w", vm.Volume, err)
		}
		if fi, err := os.Lstat(link); err == nil {
			if fi.Mode()&os.ModeSymlink == 0 && !fi.IsDir() {
				return fmt.Errorf("volume %q: destination %q exists and is not a directory", vm.Volume, vm.Destination)
			}
			if err := os.Remove(link); err != nil { // a link, or an empty directory
				return fmt.Errorf("volume %q: destination %q: %w", vm.Volume, vm.Destination, err)
			}
		}
		if err := os.Symlink(hv.Path, link); err != nil {
			return fmt.Errorf("volume %q: %w", vm.Volume, err)
		}
	}
	return nil
}
