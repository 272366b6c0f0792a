// Package testmetric reads metrics back from a Prometheus registry in
// tests.
//
// # Usage
//
// After the code under test has run, Value(t, registry, name) returns the
// value of an unlabelled counter or gauge, failing the test when the
// registry has no such metric.
//
// # Concurrency
//
// Value gathers the registry once; it is as safe as the registry's Gather.
//
// # Invariants
//
//   - Only a metric with exactly one series is read; a labelled family is
//     reported as missing rather than read at an arbitrary label.
package testmetric

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// Value returns the value of the unlabelled counter or gauge name in g,
// failing t when g has none.
func Value(t testing.TB, g prometheus.Gatherer, name string) float64 {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name || len(mf.GetMetric()) != 1 {
			continue
		}
		switch m := mf.GetMetric()[0]; {
		case m.GetCounter() != nil:
			return m.GetCounter().GetValue()
		case m.GetGauge() != nil:
			return m.GetGauge().GetValue()
		}
	}
	t.Fatalf("no counter or gauge %s", name)
	return 0
}
