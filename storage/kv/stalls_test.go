package kv

import (
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/ordoplane/ordo/clock/clocktest"
)

// TestWriteStalls: the stalls Pebble reports are counted by cause and
// timed (one in progress too), and the collector exports them with the
// LSM's health.
func TestWriteStalls(t *testing.T) {
	s := openTest(t, t.TempDir())
	clk := clocktest.NewClock(time.Unix(1_700_000_000, 0))
	s.stalls.clock = clk
	l := s.stalls.listener()
	l.WriteStallBegin(pebble.WriteStallBeginInfo{Reason: "memtable count limit reached"})
	clk.Advance(300 * time.Millisecond)
	l.WriteStallEnd()
	l.WriteStallBegin(pebble.WriteStallBeginInfo{Reason: "L0 file count limit exceeded"})
	clk.Advance(200 * time.Millisecond)

	w := s.WriteStalls()
	if w.Count["memtables"] != 1 || w.Count["l0"] != 1 || w.Total() != 2 || w.Duration != 500*time.Millisecond {
		t.Fatalf("stalls %+v, want one of each cause, 500 ms held (200 of them still)", w)
	}
	l.WriteStallEnd()
	clk.Advance(time.Hour)
	if d := s.WriteStalls().Duration; d != 500*time.Millisecond {
		t.Errorf("after the stall ended, %v held", d)
	}

	reg := prometheus.NewRegistry()
	reg.MustRegister(NewCollector(s, "test_store"))
	want := `
# HELP test_store_write_stall_seconds_total Time writes were held back by write stalls.
# TYPE test_store_write_stall_seconds_total counter
test_store_write_stall_seconds_total 0.5
# HELP test_store_write_stalls_total Times Pebble held writes back, by cause (memtables, l0, other).
# TYPE test_store_write_stalls_total counter
test_store_write_stalls_total{cause="l0"} 1
test_store_write_stalls_total{cause="memtables"} 1
test_store_write_stalls_total{cause="other"} 0
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "test_store_write_stalls_total", "test_store_write_stall_seconds_total"); err != nil {
		t.Error(err)
	}
	if n, err := testutil.GatherAndCount(reg); err != nil || n != 10 {
		t.Errorf("the collector exported %d series (%v), want 10", n, err)
	}
}
