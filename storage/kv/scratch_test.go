package kv

import (
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/cockroachdb/pebble"
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
	if n := readCompactions(t, bulkReadSampling); n != 0 {
		t.Errorf("a bulk store ran %d read compactions", n)
	}
	// The control: with Pebble's default sampling, the same reads compact
	// (else the test above proves nothing).
	if n := readCompactions(t, 0); n == 0 {
		t.Error("the control store ran no read compaction")
	}
}

// readCompactions writes three overlapping level-0 tables into a bulk
// store reading with sampling multiplier m (0: Pebble's default), reads
// them through many times and returns how many read compactions ran.
func readCompactions(t *testing.T, m int64) int64 {
	t.Helper()
	defer func(old int64) { bulkReadSampling = old }(bulkReadSampling)
	bulkReadSampling = m
	s, err := Open(t.TempDir(), Config{DisableWAL: true, Bulk: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	val := make([]byte, 100)
	for round := 0; round < 3; round++ {
		b := s.WriteBatch()
		for i := 0; i < 10000; i++ {
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
	for i := 0; i < 400; i++ {
		if err := s.Scan([]byte("k"), []byte("l"), false, func(k, v []byte) error { return nil }); err != nil {
			t.Fatal(err)
		}
		if n := s.db.Metrics().Compact.ReadCount; n > 0 {
			return n
		}
	}
	// A read compaction is scheduled after the read that asks for it.
	deadline := time.Now().Add(time.Second)
	for time.Now().Before(deadline) && s.db.Metrics().Compact.ReadCount == 0 {
		time.Sleep(10 * time.Millisecond)
	}
	return s.db.Metrics().Compact.ReadCount
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
