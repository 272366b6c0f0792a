package kv

import "github.com/prometheus/client_golang/prometheus"

// collector exports a store's LSM health and write stalls (see Health and
// WriteStalls), read at each scrape.
type collector struct {
	s                                   *Store
	l0Files, l0Sublevels, memtables     *prometheus.Desc
	debt, stalls, stallSeconds, running *prometheus.Desc
}

// NewCollector returns a Prometheus collector of s's health, its metric
// names starting with prefix (say "ordo_state_store"): level 0's files
// and sublevels, the memtables, flushes and compactions running, the
// estimated compaction debt, and the write stalls (by cause) and the time
// they held writes.
func NewCollector(s *Store, prefix string) prometheus.Collector {
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(prefix+"_"+name, help, labels, nil)
	}
	return &collector{s: s,
		l0Files:      d("l0_files", "Tables in level 0 of the store's LSM."),
		l0Sublevels:  d("l0_sublevels", "Sublevels of level 0; Pebble stops writes at 12."),
		memtables:    d("memtables", "Memtables, the mutable one and those waiting for a flush; Pebble stops writes past 2 waiting."),
		running:      d("background_jobs", "Flushes and compactions in progress.", "kind"),
		debt:         d("compaction_debt_bytes", "Estimated bytes to compact for a stable LSM."),
		stalls:       d("write_stalls_total", "Times Pebble held writes back, by cause (memtables, l0, other).", "cause"),
		stallSeconds: d("write_stall_seconds_total", "Time writes were held back by write stalls."),
	}
}

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.l0Files, c.l0Sublevels, c.memtables, c.running, c.debt, c.stalls, c.stallSeconds} {
		ch <- d
	}
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	h := c.s.Health()
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	gauge(c.l0Files, float64(h.L0Files))
	gauge(c.l0Sublevels, float64(h.L0Sublevels))
	gauge(c.memtables, float64(h.MemTables))
	gauge(c.running, float64(h.Flushing), "flush")
	gauge(c.running, float64(h.Compacting), "compaction")
	gauge(c.debt, float64(h.CompactionDebt))
	w := c.s.WriteStalls()
	for _, cause := range []string{"memtables", "l0", "other"} {
		ch <- prometheus.MustNewConstMetric(c.stalls, prometheus.CounterValue, float64(w.Count[cause]), cause)
	}
	ch <- prometheus.MustNewConstMetric(c.stallSeconds, prometheus.CounterValue, w.Duration.Seconds())
}
