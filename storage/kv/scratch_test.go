package kv

import (
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/cockroachdb/pebble"

	"github.com/ordoplane/ordo/storage/waittest"
)

// TestScratchStore: a scratch store starts empty, lives inside its
// store's directory, is deleted when closed, and one a stop left is
// deleted when its store opens, but not by an open refused because
// another process holds the store.
func TestScratchStore(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	mustSet(t, s, "k", "live")
	sc, err := s.OpenScratch()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sc.Get([]byte("k")); !errors.Is(err, ErrNotFound) {
		t.Fatalf("a new scratch store reads the live key: %v", err)
	}
	mustSet(t, sc, "k", "scratch")
	if v, err := s.Get([]byte("k")); err != nil || string(v) != "live" {
		t.Fatalf("the live store reads %q, %v", v, err)
	}
	dirs, err := ScratchStores(dir)
	if err != nil || len(dirs) != 1 || dirs[0] != sc.Dir() {
		t.Fatalf("scratch stores %v, %v; want [%s]", dirs, err, sc.Dir())
	}
	if err := sc.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(sc.Dir()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a closed scratch store is still there: %v", err)
	}

	left, err := s.OpenScratch()
	if err != nil {
		t.Fatal(err)
	}
	if other, err := Open(dir, DefaultConfig()); err == nil {
		other.Close()
		t.Fatal("a second open of a store in use succeeded")
	}
	if dirs, _ := ScratchStores(dir); len(dirs) != 1 {
		t.Fatalf("the refused open removed the owner's scratch store: %v", dirs)
	}
	if err := left.db.Close(); err != nil { // as a stop leaves it: not removed
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openTest(t, dir)
	if dirs, _ := ScratchStores(dir); len(dirs) != 0 {
		t.Errorf("a scratch store a stop left survived the open: %v", dirs)
	}
	if v, err := s.Get([]byte("k")); err != nil || string(v) != "live" {
		t.Errorf("the reopened store reads %q, %v", v, err)
	}
}

// TestScratchStoreNoReadCompactions: reading a bulk store's overlapping
// level-0 tables over and over, as the copy into table files does once,
// compacts nothing, where the same store sampling its reads compacts
// them.
func TestScratchStoreNoReadCompactions(t *testing.T) {
	// The control: with Pebble's default read sampling, these reads
	// compact; else the check below proves nothing.
	n, scans := readCompactions(t, 0, 400)
	if n == 0 {
		t.Fatalf("the control store ran no read compaction in %d scans", scans)
	}
	if n, _ := readCompactions(t, bulkReadSampling, 2*scans); n != 0 {
		t.Errorf("a bulk store ran %d read compactions in %d scans", n, 2*scans)
	}
}

// readCompactions writes three overlapping level-0 tables into a bulk
// store reading with sampling multiplier m (0: Pebble's default), reads
// them through up to maxScans times, stopping at the first read compaction, and returns how
// many read compactions ran and the scans it took.
func readCompactions(t *testing.T, m int64, maxScans int) (int64, int) {
	t.Helper()
	defer func(old int64) { bulkReadSampling = old }(bulkReadSampling)
	bulkReadSampling = m
	s, err := Open(t.TempDir(), Config{DisableWAL: true, Bulk: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// Large values: read sampling counts bytes, and few keys keep each
	// scan cheap under the race detector.
	val := make([]byte, 10000)
	for round := 0; round < 3; round++ {
		b := s.WriteBatch()
		for i := 0; i < 100; i++ {
			if err := b.Set([]byte(fmt.Sprintf("k%06d", i)), val); err != nil {
				t.Fatal(err)
			}
		}
		if err := b.Commit(false); err != nil {
			t.Fatal(err)
		}
		if err := s.FlushMemtable(); err != nil {
			t.Fatal(err)
		}
	}
	for i := range maxScans {
		if err := s.Scan([]byte("k"), []byte("l"), false, func(k, v []byte) error { return nil }); err != nil {
			t.Fatal(err)
		}
		if n := s.db.Metrics().Compact.ReadCount; n > 0 {
			return n, i + 1
		}
	}
	// A read compaction is scheduled after the read that asks for it.
	waittest.Poll(time.Second, func() bool { return s.db.Metrics().Compact.ReadCount > 0 })
	return s.db.Metrics().Compact.ReadCount, maxScans
}

// TestScratchStoreUncompressed: a bulk store flushes its tables
// uncompressed, in 32 KiB blocks, where a store of the usual shape
// compresses them in 4 KiB ones.
func TestScratchStoreUncompressed(t *testing.T) {
	for _, bulk := range []bool{true, false} {
		s, err := Open(t.TempDir(), Config{DisableWAL: true, Bulk: bulk})
		if err != nil {
			t.Fatal(err)
		}
		b := s.WriteBatch()
		for i := 0; i < 1000; i++ {
			if err := b.Set([]byte(fmt.Sprintf("k%06d", i)), make([]byte, 100)); err != nil {
				t.Fatal(err)
			}
		}
		if err := b.Commit(false); err != nil {
			t.Fatal(err)
		}
		if err := s.FlushMemtable(); err != nil {
			t.Fatal(err)
		}
		levels, err := s.db.SSTables(pebble.WithProperties())
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		var blocks uint64
		for _, level := range levels {
			for _, tbl := range level {
				names = append(names, tbl.Properties.CompressionName)
				blocks += tbl.Properties.NumDataBlocks
			}
		}
		// About 110 KB of rows: 4 blocks of 32 KiB, 27 of 4 KiB.
		if large := blocks <= 5; large != bulk {
			t.Errorf("bulk %v: %d data blocks", bulk, blocks)
		}
		if len(names) == 0 {
			t.Fatalf("bulk %v: no table flushed", bulk)
		}
		for _, n := range names {
			if compressed := n != "NoCompression"; compressed == bulk {
				t.Errorf("bulk %v: a table compressed with %q", bulk, n)
			}
		}
		s.Close()
	}
}
