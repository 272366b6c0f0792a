package logtee_test

import (
	"net/url"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ordoplane/ordo/storage/waittest"
	"github.com/ordoplane/ordo/test/testmetric"
)

func parseQuery(q string) (url.Values, error) { return url.ParseQuery(q) }

// value reads the gauge or counter name from reg.
func value(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	return testmetric.Value(t, reg, name)
}

const (
	subscribersMetric = "ordo_agent_monitor_subscribers"
	droppedMetric     = "ordo_agent_monitor_dropped_lines_total"
)

// pollGauge waits for the subscribers gauge to read want.
func pollGauge(t *testing.T, reg *prometheus.Registry, want float64) bool {
	return waittest.Poll(10*time.Second, func() bool { return value(t, reg, subscribersMetric) == want })
}
