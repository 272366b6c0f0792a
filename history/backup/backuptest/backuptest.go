package backuptest

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// RestoreCounts returns ordo_snapshot_restores_total by result
// (installed, invalid, failed) as reg gathers it.
func RestoreCounts(t testing.TB, reg prometheus.Gatherer) map[string]float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() != "ordo_snapshot_restores_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "result" {
					out[l.GetValue()] = m.GetCounter().GetValue()
				}
			}
		}
	}
	return out
}
