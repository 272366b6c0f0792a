package client

import (
	"context"
	"reflect"
	"time"

	"github.com/ordoplane/ordo/client/allocrunner"
	"github.com/ordoplane/ordo/client/csi"
)

// csiHooks returns the allocation hooks of CSI (none without a Manager).
func (c *Client) csiHooks() []allocrunner.Hook {
	if c.cfg.CSI == nil {
		return nil
	}
	return []allocrunner.Hook{&csi.Hook{M: c.cfg.CSI, Volumes: c.api.CSIVolume}}
}

// csiLoop fingerprints the CSI plugins the node's tasks serve every
// CSIFingerprintInterval and registers the node again when they changed,
// so the servers see plugins appear, turn healthy and go.
func (c *Client) csiLoop(ctx context.Context) {
	if c.cfg.CSI == nil {
		return
	}
	for {
		t := c.cfg.Clock.NewTimer(c.cfg.CSIFingerprintInterval)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C():
		}
		fctx, cancel := context.WithTimeout(ctx, c.cfg.CSIFingerprintInterval+5*time.Second)
		controllers, nodes := c.cfg.CSI.Fingerprint(fctx)
		cancel()
		c.mu.Lock()
		changed := !reflect.DeepEqual(controllers, c.mu.node.CSIControllerPlugins) || !reflect.DeepEqual(nodes, c.mu.node.CSINodePlugins)
		if changed {
			c.mu.node.CSIControllerPlugins, c.mu.node.CSINodePlugins = controllers, nodes
		}
		c.mu.Unlock()
		if changed {
			c.log.Info("CSI plugins changed: registering again", "controllers", len(controllers), "nodes", len(nodes))
			select {
			case c.reregister <- struct{}{}:
			default:
			}
		}
	}
}
