package main

import (
	"os"
	"runtime/debug"
)

// batchGCPercent is the Go collector's target of a command that replays
// history in its own process (an offline rebuild or verify, a replay).
// Replaying keeps large maps of rows in memory and allocates for every
// event; collecting at 400% heap growth instead of 100% trades memory
// for CPU: a 200,000-event rebuild from scratch ran at 19,000 instead of
// 16,000 events/s (docs/history.md).
const batchGCPercent = 400

// batchGC sets the collector for a replaying command, unless GOGC says
// otherwise (the user's choice wins).
func batchGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(batchGCPercent)
	}
}
