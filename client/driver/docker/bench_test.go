package docker_test

import (
	"context"
	"fmt"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/ordoplane/ordo/client/driver"
)

// BenchmarkStart starts b.N long-running containers one after another,
// as a client placing allocations does, and reports the latency of Start
// (image check, stale-container lookup, create, start) at p50 and p99,
// beside the daemon's own create and start of the same container without
// the driver (daemon-p50-ms), measured as many times; then the client's
// CPU per running container over a second of idleness.
func BenchmarkStart(b *testing.B) {
	d := newDriver(b, nil)
	var took, base []time.Duration
	var handles []driver.Handle
	for i := 0; i < b.N; i++ {
		cfg := taskConfig(b, sh("exec sleep 600"))
		cfg.AllocID, cfg.ID = fmt.Sprintf("bench-%d", i), fmt.Sprintf("bench-%d-web-0", i)
		begin := time.Now()
		h, err := d.Start(context.Background(), cfg)
		if err != nil {
			b.Fatal(err)
		}
		took = append(took, time.Since(begin))
		handles = append(handles, h)
		base = append(base, daemon.CreateStart(b, daemon.Image, "/bin/sleep", "600"))
	}
	// The client's CPU while the containers run idle: the driver's
	// goroutines of each (a wait and a log stream, both blocked on the
	// daemon) should cost next to nothing.
	before := cpuTime(b)
	time.Sleep(time.Second) // a window of idle time to measure, not a wait for a condition
	idle := cpuTime(b) - before
	for _, h := range handles {
		if err := h.Signal("SIGKILL"); err != nil {
			b.Error(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), patience)
		if _, err := h.Wait(ctx); err != nil {
			b.Error(err)
		}
		cancel()
	}
	ms := func(ds []time.Duration, q int) float64 {
		slices.Sort(ds)
		return float64(ds[(len(ds)-1)*q/100].Microseconds()) / 1000
	}
	b.ReportMetric(ms(took, 50), "p50-ms")
	b.ReportMetric(ms(took, 99), "p99-ms")
	b.ReportMetric(ms(base, 50), "daemon-p50-ms")
	b.ReportMetric(ms(base, 99), "daemon-p99-ms")
	b.ReportMetric(float64(idle.Microseconds())/float64(len(handles)), "idle-cpu-us/s/container")
}

// cpuTime is the user and system CPU time of this process.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
