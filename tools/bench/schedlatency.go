package main

import (
	"math"
	"runtime/metrics"
	"time"
)

// runtimeHist reads one of the Go runtime's histograms (runtime/metrics),
// to tell, over a measured run, how long goroutines waited to run: a
// slow apply on a saturated machine is often a goroutine waiting for a
// core, not work.
type runtimeHist struct {
	name   string
	counts []uint64
	bounds []float64
}

// Runtime histograms the benches read.
const (
	// schedLatencies: how long goroutines spent runnable before they ran.
	schedLatencies = "/sched/latencies:seconds"
	// gcPauses: stop-the-world pauses of the collector.
	gcPauses = "/sched/pauses/total/gc:seconds"
)

// readRuntimeHist returns the histogram name now.
func readRuntimeHist(name string) runtimeHist {
	s := []metrics.Sample{{Name: name}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindFloat64Histogram {
		return runtimeHist{name: name}
	}
	h := s[0].Value.Float64Histogram()
	return runtimeHist{name: name, counts: append([]uint64(nil), h.Counts...), bounds: append([]float64(nil), h.Buckets...)}
}

// since returns what h counted after earlier, a reading of the same
// histogram.
func (h runtimeHist) since(earlier runtimeHist) runtimeHist {
	out := runtimeHist{name: h.name, bounds: h.bounds, counts: make([]uint64, len(h.counts))}
	for i, c := range h.counts {
		if i < len(earlier.counts) {
			c -= earlier.counts[i]
		}
		out.counts[i] = c
	}
	return out
}

// total returns how many observations h holds.
func (h runtimeHist) total() uint64 {
	var n uint64
	for _, c := range h.counts {
		n += c
	}
	return n
}

// quantile returns the upper bound of the bucket that holds quantile q of
// h (an overestimate by at most the bucket's width); 1 gives the bound
// of the highest bucket observed.
func (h runtimeHist) quantile(q float64) time.Duration {
	n := h.total()
	if n == 0 {
		return 0
	}
	rank := uint64(math.Ceil(q * float64(n)))
	var seen uint64
	for i, c := range h.counts {
		seen += c
		if seen >= rank && c > 0 {
			hi := h.bounds[i+1]
			if math.IsInf(hi, 1) {
				hi = h.bounds[i]
			}
			return time.Duration(hi * float64(time.Second))
		}
	}
	return 0
}

// over returns how many observations of h lay above d (counting a bucket
// whose lower bound is at or above d).
func (h runtimeHist) over(d time.Duration) uint64 {
	var n uint64
	for i, c := range h.counts {
		if h.bounds[i] >= d.Seconds() {
			n += c
		}
	}
	return n
}
