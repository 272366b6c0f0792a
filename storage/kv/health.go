package kv

// Health is a sample of the store's LSM: what a benchmark reads beside a
// slow write to tell a write stall (too many L0 sublevels, memtables
// waiting for a flush) from contention for the CPU.
type Health struct {
	// L0Files and L0Sublevels are level 0's sstables and sublevels; Pebble
	// stops writes at 12 sublevels (L0StopWritesThreshold).
	L0Files     int64
	L0Sublevels int32
	// MemTables counts the memtables (the mutable one and those queued
	// for a flush); writes stop at MemTableStopWritesThreshold (2) queued.
	MemTables int64
	// Flushing and Compacting count flushes and compactions in progress.
	Flushing, Compacting int64
	// CompactionDebt estimates the bytes to compact for a stable LSM.
	CompactionDebt uint64
}

// Health samples the store's LSM (Pebble's metrics; cheap enough to call
// every 100 ms).
func (s *Store) Health() Health {
	m := s.db.Metrics()
	return Health{
		L0Files: m.Levels[0].NumFiles, L0Sublevels: m.Levels[0].Sublevels,
		MemTables: m.MemTable.Count, Flushing: m.Flush.NumInProgress, Compacting: m.Compact.NumInProgress,
		CompactionDebt: m.Compact.EstimatedDebt,
	}
}
