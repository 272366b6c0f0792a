package main

import (
	"fmt"
	"os"
	"time"

	"github.com/ordoplane/ordo/storage/kv"
)

// quietSamples is how many samples in a row, quietEvery apart, busy must
// deny for waitQuiet to count the work as settled.
const quietSamples = 6

// quietEvery is how far apart waitQuiet samples (the tests shorten it:
// they check the figures are made, not that the store had settled).
var quietEvery = 500 * time.Millisecond

// waitQuiet waits, up to limit, until busy has said no quietSamples
// times in a row, and returns how long it waited.
func waitQuiet(limit time.Duration, busy func() bool) time.Duration {
	start := time.Now()
	for quiet := 0; quiet < quietSamples && time.Since(start) < limit; {
		time.Sleep(quietEvery)
		if busy() {
			quiet = 0
		} else {
			quiet++
		}
	}
	return time.Since(start)
}

// storeBusy reports whether s is flushing or compacting.
func storeBusy(s *kv.Store) bool {
	h := s.Health()
	return h.Flushing > 0 || h.Compacting > 0
}

// settle waits, up to 2 minutes, until src has run no flush or
// compaction for a few samples in a row: a history the generator wrote
// in a few seconds leaves its store compacting for a while after, which
// would otherwise share the cores with the rebuild measured (a server's
// settled archive compacts little). Pebble's estimated compaction debt
// stays above zero on a settled store, so it is reported, not waited on.
func settle(src *kv.Store) {
	took := waitQuiet(2*time.Minute, func() bool { return storeBusy(src) })
	h := src.Health()
	fmt.Fprintf(os.Stderr, "bench: the history's store settled in %.1f s (compacting %d, debt %d bytes, L0 files %d)\n",
		took.Seconds(), h.Compacting, h.CompactionDebt, h.L0Files)
}
