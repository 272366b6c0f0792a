package main

import (
	"math"
	"testing"
	"time"
)

// TestRuntimeHist: quantiles are the upper bound of the bucket holding
// them, counts over a bound take whole buckets, and since subtracts an
// earlier reading.
func TestRuntimeHist(t *testing.T) {
	ms := func(n float64) float64 { return n / 1000 }
	earlier := runtimeHist{bounds: []float64{0, ms(1), ms(10), ms(100), math.Inf(1)}, counts: []uint64{10, 0, 0, 0}}
	now := runtimeHist{bounds: earlier.bounds, counts: []uint64{110, 890, 9, 1}}
	h := now.since(earlier)
	if got := h.total(); got != 1000 {
		t.Fatalf("total %d, want 1000", got)
	}
	for _, c := range []struct {
		q    float64
		want time.Duration
	}{{0.1, time.Millisecond}, {0.99, 10 * time.Millisecond}, {0.999, 100 * time.Millisecond}, {1, 100 * time.Millisecond}} {
		if got := h.quantile(c.q); got != c.want {
			t.Errorf("quantile(%v) = %v, want %v", c.q, got, c.want)
		}
	}
	if got := h.over(10 * time.Millisecond); got != 10 {
		t.Errorf("over 10ms: %d, want 10 (the buckets from 10 ms up)", got)
	}
	if got := h.over(time.Millisecond); got != 900 {
		t.Errorf("over 1ms: %d, want 900", got)
	}
	if got := (runtimeHist{}).quantile(0.99); got != 0 {
		t.Errorf("empty histogram quantile %v", got)
	}
	// The top bucket reaches +Inf: its lower bound stands for it.
	top := runtimeHist{bounds: earlier.bounds, counts: []uint64{0, 0, 0, 5}}
	if got := top.quantile(1); got != 100*time.Millisecond {
		t.Errorf("top bucket quantile %v, want 100ms", got)
	}
}
