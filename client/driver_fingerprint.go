package client

import (
	"context"
	"maps"
	"reflect"
	"strings"

	"github.com/ordoplane/ordo/client/fingerprint"
	"github.com/ordoplane/ordo/events"
)

// driverLoop fingerprints the drivers every DriverFingerprintInterval and
// registers the node again when one's health or attributes changed, so
// the servers stop placing tasks of a driver that went unhealthy (a
// docker daemon that stopped) and start once it is back.
func (c *Client) driverLoop(ctx context.Context) {
	for {
		t := c.cfg.Clock.NewTimer(c.cfg.DriverFingerprintInterval)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C():
		}
		infos := map[string]events.DriverInfo{}
		published := map[string]map[string]string{}
		for _, d := range c.cfg.Drivers {
			infos[d.Name()], published[d.Name()] = fingerprint.Driver(d)
		}
		c.mu.Lock()
		changed := applyDriverFingerprints(&c.mu.node, infos, published)
		c.mu.Unlock()
		if changed {
			c.log.Info("driver health or attributes changed: registering again")
			select {
			case c.reregister <- struct{}{}:
			default:
			}
		}
	}
}

// applyDriverFingerprints sets the drivers' infos in n and replaces the
// attributes each driver publishes (driver.<name> and driver.<name>.*)
// with its new ones; it reports whether anything changed.
func applyDriverFingerprints(n *events.Node, infos map[string]events.DriverInfo, published map[string]map[string]string) bool {
	attrs := maps.Clone(n.Attributes)
	if attrs == nil {
		attrs = map[string]string{}
	}
	drivers := maps.Clone(n.Drivers)
	if drivers == nil {
		drivers = map[string]events.DriverInfo{}
	}
	for name, info := range infos {
		drivers[name] = info
		for k := range attrs {
			if k == "driver."+name || strings.HasPrefix(k, "driver."+name+".") {
				delete(attrs, k)
			}
		}
		for k, v := range published[name] {
			attrs[k] = v
		}
	}
	if reflect.DeepEqual(drivers, n.Drivers) && maps.Equal(attrs, n.Attributes) {
		return false
	}
	n.Drivers, n.Attributes = drivers, attrs
	return true
}
