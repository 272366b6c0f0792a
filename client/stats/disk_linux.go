//go:build linux

package stats

import (
	"fmt"
	"syscall"

	"github.com/ordoplane/ordo/api"
)

// diskStats returns the use of the filesystem holding path.
func diskStats(device, path string) (*api.HostDiskStats, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		return nil, fmt.Errorf("stats: statfs %s: %w", path, err)
	}
	bs := uint64(st.Bsize)
	d := &api.HostDiskStats{Device: device, Mountpoint: path, Size: st.Blocks * bs,
		Available: st.Bavail * bs, Used: (st.Blocks - st.Bfree) * bs}
	if d.Size > 0 {
		d.UsedPercent = 100 * float64(d.Used) / float64(d.Used+d.Available)
	}
	if st.Files > 0 {
		d.InodesUsedPercent = 100 * float64(st.Files-st.Ffree) / float64(st.Files)
	}
	return d, nil
}
