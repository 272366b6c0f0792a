package client

import (
	"maps"
	"testing"

	"github.com/ordoplane/ordo/events"
)

// TestApplyDriverFingerprints: a driver turning unhealthy takes its
// attributes off the node, one turning healthy puts them back, other
// attributes stay, and an unchanged fingerprint changes nothing.
func TestApplyDriverFingerprints(t *testing.T) {
	healthy := events.DriverInfo{Detected: true, Healthy: true, HealthDescription: "healthy", Attributes: map[string]string{"driver.docker.version": "20.10"}}
	down := events.DriverInfo{Detected: true, HealthDescription: "driver unhealthy"}
	n := events.Node{
		Attributes: map[string]string{"kernel.name": "linux", "driver.exec": "1", "driver.docker": "1", "driver.docker.version": "20.10", "driver.dockerish": "1"},
		Drivers:    map[string]events.DriverInfo{"exec": {Detected: true, Healthy: true, HealthDescription: "healthy"}, "docker": healthy},
	}
	before := maps.Clone(n.Attributes)

	if applyDriverFingerprints(&n, map[string]events.DriverInfo{"docker": healthy},
		map[string]map[string]string{"docker": {"driver.docker": "1", "driver.docker.version": "20.10"}}) {
		t.Error("an unchanged fingerprint reported a change")
	}
	if !applyDriverFingerprints(&n, map[string]events.DriverInfo{"docker": down}, map[string]map[string]string{}) {
		t.Fatal("docker turning unhealthy reported no change")
	}
	want := map[string]string{"kernel.name": "linux", "driver.exec": "1", "driver.dockerish": "1"}
	if !maps.Equal(n.Attributes, want) || n.Drivers["docker"].Healthy || !n.Drivers["exec"].Healthy {
		t.Fatalf("after docker went down: attributes %v, drivers %v", n.Attributes, n.Drivers)
	}
	if !applyDriverFingerprints(&n, map[string]events.DriverInfo{"docker": healthy},
		map[string]map[string]string{"docker": {"driver.docker": "1", "driver.docker.version": "20.10"}}) {
		t.Fatal("docker back reported no change")
	}
	if !maps.Equal(n.Attributes, before) {
		t.Errorf("after docker came back: %v, want %v", n.Attributes, before)
	}
}
