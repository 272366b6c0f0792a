package storagetest

import (
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// LogStoreSuite checks what hashicorp/raft relies on from a raft.LogStore.
// open must return a new, empty store for each call and register its own
// cleanup with t.
func LogStoreSuite(t *testing.T, open func(t *testing.T) raft.LogStore) {
	t.Run("Empty", func(t *testing.T) {
		s := open(t)
		checkBounds(t, s, 0, 0)
		checkMissing(t, s, 0, 1, 2, ^uint64(0))
	})

	t.Run("StoreLogRoundTrip", func(t *testing.T) {
		s := open(t)
		at := time.Date(2025, 3, 4, 5, 6, 7, 891_011_121, time.FixedZone("UTC-7", -7*3600))
		cases := []*raft.Log{
			{Index: 1, Term: 1, Type: raft.LogConfiguration, Data: []byte("config"), Extensions: []byte("ext"), AppendedAt: at},
			{Index: 2, Term: 1, Type: raft.LogNoop},
			{Index: 3, Term: 2, Type: raft.LogCommand, Data: []byte{0, 1, 0xff, 0}, AppendedAt: at.UTC()},
			{Index: 4, Term: 1 << 40, Type: raft.LogBarrier, Extensions: []byte{0}},
			{Index: 5, Term: ^uint64(0), Type: raft.LogType(0xff), Data: make([]byte, 1<<16), AppendedAt: time.Unix(0, 1)},
			{Index: 6, Term: 3, Type: raft.LogCommand, Data: []byte("before 1970"), AppendedAt: time.Unix(-5, 999_999_999)},
			{Index: 1 << 40, Term: 3, Type: raft.LogCommand, Data: []byte("far")},
		}
		for _, l := range cases {
			if err := s.StoreLog(l); err != nil {
				t.Fatalf("StoreLog(%d): %v", l.Index, err)
			}
		}
		checkBounds(t, s, 1, 1<<40)
		checkLogs(t, s, cases...)
		checkMissing(t, s, 7, 1<<40-1, 1<<40+1)

		// GetLog overwrites every field of the destination, including
		// those the stored entry leaves empty.
		got := raft.Log{Index: 99, Term: 99, Type: raft.LogBarrier, Data: []byte("stale"),
			Extensions: []byte("stale"), AppendedAt: at}
		if err := s.GetLog(2, &got); err != nil {
			t.Fatalf("GetLog(2): %v", err)
		}
		if d := EqualLog(&got, cases[1]); d != "" {
			t.Fatalf("GetLog(2) into a used Log: %s", d)
		}
	})

	t.Run("StoreLogsRanges", func(t *testing.T) {
		s := open(t)
		first := Entries(1, 100, 1)
		mustStore(t, s, first)
		checkBounds(t, s, 1, 100)
		checkLogs(t, s, first...)
		checkMissing(t, s, 0, 101)

		next := Entries(101, 164, 2)
		mustStore(t, s, next)
		checkBounds(t, s, 1, 164)
		checkLogs(t, s, next...)
		checkMissing(t, s, 165)

		mustStore(t, s, nil)
		checkBounds(t, s, 1, 164)
	})

	t.Run("StoreLogReplaces", func(t *testing.T) {
		s := open(t)
		mustStore(t, s, Entries(1, 10, 1))
		for _, repl := range []*raft.Log{Entry(10, 2), Entry(5, 2), Entry(1, 2)} {
			if err := s.StoreLog(repl); err != nil {
				t.Fatalf("StoreLog(%d): %v", repl.Index, err)
			}
			checkBounds(t, s, 1, 10)
			checkLogs(t, s, repl)
		}
	})

	t.Run("StoreLogsWithGap", func(t *testing.T) {
		// After restoring a user snapshot raft appends past a gap.
		s := open(t)
		mustStore(t, s, Entries(1, 10, 1))
		after := Entries(50, 60, 2)
		mustStore(t, s, after)
		checkBounds(t, s, 1, 60)
		checkMissing(t, s, 11, 30, 49, 61)
		checkLogs(t, s, after...)
	})

	t.Run("DeleteRangePrefix", func(t *testing.T) {
		// Log compaction after a snapshot.
		s := open(t)
		logs := Entries(1, 100, 1)
		mustStore(t, s, logs)
		mustDelete(t, s, 1, 60)
		checkBounds(t, s, 61, 100)
		checkMissing(t, s, 1, 30, 60)
		checkLogs(t, s, logs[60:]...)

		mustDelete(t, s, 61, 90)
		checkBounds(t, s, 91, 100)
		checkMissing(t, s, 61, 90)
		checkLogs(t, s, logs[90:]...)

		more := Entries(101, 120, 2)
		mustStore(t, s, more)
		checkBounds(t, s, 91, 120)
		checkLogs(t, s, more...)
	})

	t.Run("DeleteRangeSuffix", func(t *testing.T) {
		// Truncating a follower's conflicting entries, then appending the
		// leader's.
		s := open(t)
		logs := Entries(1, 100, 1)
		mustStore(t, s, logs)
		mustDelete(t, s, 71, 100)
		checkBounds(t, s, 1, 70)
		checkMissing(t, s, 71, 100)
		checkLogs(t, s, logs[:70]...)

		leader := Entries(71, 80, 2)
		mustStore(t, s, leader)
		checkBounds(t, s, 1, 80)
		checkLogs(t, s, leader...)
		checkMissing(t, s, 81, 100)
	})

	t.Run("DeleteRangeAll", func(t *testing.T) {
		// Installing a snapshot from the leader, then appending past it.
		s := open(t)
		mustStore(t, s, Entries(1, 100, 1))
		mustDelete(t, s, 1, 100)
		checkBounds(t, s, 0, 0)
		checkMissing(t, s, 1, 50, 100)

		after := Entries(500, 510, 3)
		mustStore(t, s, after)
		checkBounds(t, s, 500, 510)
		checkLogs(t, s, after...)
	})

	t.Run("DeleteRangeOne", func(t *testing.T) {
		s := open(t)
		mustStore(t, s, Entries(1, 3, 1))
		mustDelete(t, s, 3, 3)
		checkBounds(t, s, 1, 2)
		mustDelete(t, s, 1, 1)
		checkBounds(t, s, 2, 2)
		checkMissing(t, s, 1, 3)
		checkLogs(t, s, Entry(2, 1))
	})

	t.Run("Concurrent", func(t *testing.T) {
		// raft reads entries from replication goroutines while its main
		// goroutine appends and compacts: an index reported by LastIndex
		// must be readable unless compaction has since removed it.
		s := open(t)
		mustStore(t, s, Entries(1, 1, 1))
		const batches, size = 50, 16
		done := make(chan struct{})
		var wg sync.WaitGroup
		errs := make(chan string, 8)
		for range 4 {
			wg.Go(func() {
				for {
					select {
					case <-done:
						return
					default:
					}
					last, err := s.LastIndex()
					if err != nil {
						errs <- "LastIndex: " + err.Error()
						return
					}
					var l raft.Log
					err = s.GetLog(last, &l)
					if err == raft.ErrLogNotFound { //nolint:errorlint // raft compares with ==
						// Compacted since LastIndex, like raft's oldestLog
						// allows for; FirstIndex must have moved past it.
						if first, ferr := s.FirstIndex(); ferr == nil && first > last {
							continue
						}
					}
					if err != nil {
						errs <- "GetLog(LastIndex): " + err.Error()
						return
					}
					if l.Index != last {
						errs <- "GetLog(LastIndex) returned another index"
						return
					}
				}
			})
		}
		for b := range uint64(batches) {
			mustStore(t, s, Entries(2+b*size, 1+(b+1)*size, 1))
			if b%10 == 9 {
				mustDelete(t, s, 1, b*size)
			}
		}
		close(done)
		wg.Wait()
		close(errs)
		for e := range errs {
			t.Error(e)
		}
		checkBounds(t, s, (batches-1)*size+1, 1+batches*size)
	})
}
