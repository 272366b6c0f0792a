package main

import (
	"os"
	"runtime/debug"

	"github.com/ordoplane/ordo/projections"
)

// batchGC sets the collector of a command that replays history in its
// own process to projections.ReplayGCPercent, unless GOGC says otherwise
// (the user's choice wins).
func batchGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(projections.ReplayGCPercent)
	}
}
