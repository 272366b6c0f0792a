package main

import (
	"github.com/ordoplane/ordo/cmd/agent"
	"github.com/ordoplane/ordo/projections/rebuild"
)

// batchGC sets the collector of a command that replays history in its
// own process to rebuild.ReplayGCPercent, unless GOGC says otherwise
// (the user's choice wins).
func batchGC() { agent.CollectAt(rebuild.ReplayGCPercent) }
