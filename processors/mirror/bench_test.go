package mirror

import (
	"bytes"
	"testing"
	"time"

	"github.com/ordoplane/ordo/storage/archive"
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

// BenchmarkBuild is the cost of building one record the general way
// (decode, redact, encode, headers).
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

// BenchmarkBuildRaw is the cost of building one record on the fast path,
// straight from the archived bytes.
func BenchmarkBuildRaw(b *testing.B) {
	l := newLog(b)
	l.namespaces(1, 1, 1)
	var data []byte
	if err := archive.Scan(l.store, 0, 0, func(_ uint64, _ uint32, v []byte) error {
		data = bytes.Clone(v)
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	var bl builder
	var r recordHolder
	o := recordOptions{Topic: "t", Source: "/ordo", Format: FormatJSON, Partitions: 6}
	for b.Loop() {
		bl.reset()
		if _, ok := bl.buildRaw(data, o, &r.r); !ok {
			b.Fatal("not built on the fast path")
		}
	}
}
