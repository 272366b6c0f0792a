package raftstore_test

import (
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/ordoplane/ordo/storage/raftstore"
)

// BenchmarkStoreLogs appends batches of 64 entries of 200 bytes, as raft's
// leader does under load, and reports entries/s.
func BenchmarkStoreLogs(b *testing.B) {
	const batch, size = 64, 200
	for _, bc := range []struct {
		name string
		cfg  raftstore.Config
	}{
		{"sync", raftstore.DefaultConfig()},
		{"nosync", func() raftstore.Config { c := raftstore.DefaultConfig(); c.NoSync = true; return c }()},
	} {
		b.Run(bc.name, func(b *testing.B) {
			s, err := raftstore.Open(b.TempDir(), bc.cfg)
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			logs := make([]*raft.Log, batch)
			data := make([]byte, size)
			for i := range logs {
				logs[i] = &raft.Log{Term: 1, Type: raft.LogCommand, Data: data, AppendedAt: time.Now()}
			}
			next := uint64(1)
			b.SetBytes(batch * size)
			b.ReportAllocs()
			for b.Loop() {
				for _, l := range logs {
					l.Index = next
					next++
				}
				if err := s.StoreLogs(logs); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(next-1)/b.Elapsed().Seconds(), "entries/s")
		})
	}
}

// BenchmarkGetLog reads 200-byte entries back, as replication and the FSM do.
func BenchmarkGetLog(b *testing.B) {
	const n = 10_000
	cfg := raftstore.DefaultConfig()
	cfg.NoSync = true
	s, err := raftstore.Open(b.TempDir(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	logs := make([]*raft.Log, n)
	for i := range logs {
		logs[i] = &raft.Log{Index: uint64(i + 1), Term: 1, Data: make([]byte, 200), AppendedAt: time.Now()}
	}
	if err := s.StoreLogs(logs); err != nil {
		b.Fatal(err)
	}
	var l raft.Log
	i := uint64(0)
	b.ReportAllocs()
	for b.Loop() {
		if err := s.GetLog(i%n+1, &l); err != nil {
			b.Fatal(err)
		}
		i++
	}
	b.ReportMetric(float64(i)/b.Elapsed().Seconds(), "entries/s")
}
