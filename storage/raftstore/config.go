package raftstore

import "fmt"

// Config configures a Store.
type Config struct {
	// NoSync makes writes return before they are synced to disk. For tests
	// only: a crash may then lose entries and votes raft believes durable,
	// which breaks raft's safety. Default false: every write uses pebble.Sync.
	NoSync bool
	// CacheBytes is the size in bytes of Pebble's block cache, which serves
	// GetLog for entries no longer in the memtable. Default 8 MiB; 0 leaves
	// Pebble's own default.
	CacheBytes int64
}

// DefaultConfig returns the Config to use outside tests.
func DefaultConfig() Config {
	return Config{CacheBytes: 8 << 20}
}

// Validate reports a Config that cannot work.
func (c Config) Validate() error {
	if c.CacheBytes < 0 {
		return fmt.Errorf("raftstore: CacheBytes %d is negative", c.CacheBytes)
	}
	return nil
}
