package mirror

import (
	"testing"
	"time"

	"github.com/ordoplane/ordo/storage/waittest"
)

// BenchmarkCatchUp mirrors an archive of 100,000 namespace events from
// cold into kfake; events/s is the figure.
func BenchmarkCatchUp(b *testing.B) {
	l := newLog(b)
	l.namespaces(100_000, 1, 10_000)
	for b.Loop() {
		k := startKafka(b)
		m := newMirror(b, l, k.ListenAddrs(), nil)
		start := time.Now()
		r := run(m)
		waittest.For(b, 5*time.Minute, "caught up", func() bool { return m.Mirrored() == l.last() })
		b.ReportMetric(100_000/time.Since(start).Seconds(), "events/s")
		r.stop(b)
		m.Close()
		k.Close()
	}
}

// BenchmarkBuild is the cost of building one record (decode, redact,
// encode, headers).
func BenchmarkBuild(b *testing.B) {
	l := newLog(b)
	l.namespaces(1, 1, 1)
	ev := decodeAll(b, l)[0]
	var bl builder
	var r recordHolder
	o := recordOptions{Topic: "t", Source: "/ordo", Format: FormatJSON, Partitions: 6}
	for b.Loop() {
		bl.reset()
		if err := bl.build(ev, o, &r.r); err != nil {
			b.Fatal(err)
		}
	}
}
