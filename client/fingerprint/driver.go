package fingerprint

import (
	"github.com/ordoplane/ordo/client/driver"
	"github.com/ordoplane/ordo/events"
)

// Driver fingerprints d: the node's DriverInfo for it, and the
// attributes it publishes — driver.<name> = "1" and the driver's own —
// when it is detected and healthy (none otherwise).
func Driver(d driver.Driver) (events.DriverInfo, map[string]string) {
	fp := d.Fingerprint()
	info := events.DriverInfo{Detected: fp.Detected, Healthy: fp.Healthy, Attributes: fp.Attributes}
	switch {
	case !fp.Detected:
		info.HealthDescription = "driver not detected"
	case !fp.Healthy:
		info.HealthDescription = "driver unhealthy"
	default:
		info.HealthDescription = "healthy"
	}
	if !fp.Detected || !fp.Healthy {
		return info, nil
	}
	attrs := map[string]string{"driver." + d.Name(): "1"}
	for k, v := range fp.Attributes {
		attrs[k] = v
	}
	return info, attrs
}
