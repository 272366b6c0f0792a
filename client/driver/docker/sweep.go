package docker

import (
	"context"
	"fmt"
)

// Sweep implements driver.Sweeper: it removes the containers labelled
// with this driver's Owner whose allocation known does not report,
// running or not. With no Owner it removes nothing.
func (d *Driver) Sweep(ctx context.Context, known func(allocID string) bool) (int, error) {
	if d.cfg.Owner == "" {
		return 0, nil
	}
	ids, err := d.api.list(ctx, map[string]string{LabelOwner: d.cfg.Owner})
	if err != nil {
		return 0, fmt.Errorf("docker: sweep: %w", err)
	}
	removed := 0
	for _, id := range ids {
		info, err := d.api.inspect(ctx, id)
		if err != nil {
			continue // gone meanwhile
		}
		alloc := info.Config.Labels[LabelAllocID]
		if alloc == "" || known(alloc) {
			continue
		}
		if err := d.api.remove(ctx, id); err != nil {
			return removed, fmt.Errorf("docker: sweep: remove container %s of allocation %s: %w", id, alloc, err)
		}
		d.cfg.Logger.Info("docker: removed a container of an allocation the client has no record of",
			"alloc_id", alloc, "task", info.Config.Labels[LabelTaskName], "container", id)
		removed++
	}
	return removed, nil
}
