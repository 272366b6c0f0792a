package agent

import (
	"os"
	"path/filepath"
	"runtime/debug"

	"github.com/ordoplane/ordo/client/fingerprint"
)

// ServerGCPercent is the Go collector's target (debug.SetGCPercent) for a
// process that runs a server. A server's data lives in Pebble, outside
// Go's heap, so its live heap is small and at Go's default of 100% it
// collects many times a second under load (487 cycles in the 24 s of the
// million-eval delete of docs/gc.md): each cycle takes a quarter of the
// cores and has allocating goroutines — an FSM applying an entry among
// them — do marking work. At 400% that delete ran 87–96 cycles, took
// about a tenth less CPU and had 1–5 instead of 7–14 entries over 10 ms.
const ServerGCPercent = 400

// CollectAt sets the Go collector's target to percent unless $GOGC is
// set (the operator's choice wins), and reports whether it did.
func CollectAt(percent int) bool {
	if os.Getenv("GOGC") != "" {
		return false
	}
	debug.SetGCPercent(percent)
	return true
}

// TuneGC sets this process's Go collector for a server: ServerGCPercent
// (CollectAt), and, unless $GOMEMLIMIT is set, a soft memory limit of
// half the memory procRoot's meminfo reports (the collector works harder
// near it, so a large heap does not grow to five times its live size).
// It returns the target and the limit it set, 0 for one it left alone.
func TuneGC(procRoot string) (percent int, limit int64) {
	if CollectAt(ServerGCPercent) {
		percent = ServerGCPercent
	}
	if os.Getenv("GOMEMLIMIT") != "" {
		return percent, 0
	}
	f, err := os.Open(filepath.Join(procRoot, "meminfo"))
	if err != nil {
		return percent, 0
	}
	defer f.Close()
	total, err := fingerprint.ParseMemInfo(f)
	if err != nil || total == 0 {
		return percent, 0
	}
	limit = int64(total / 2)
	debug.SetMemoryLimit(limit)
	return percent, limit
}
