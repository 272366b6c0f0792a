package agent

import (
	"github.com/ordoplane/ordo/processors/volumewatcher"
)

// newVolumeWatcher returns the leader's CSI volume watcher: it releases
// the claims of stopped and garbage-collected allocations through the
// node and controller unpublish steps, calling the plugins through the
// clients that run them (csidetach.go).
func (a *Agent) newVolumeWatcher() (*volumewatcher.Watcher, error) {
	return volumewatcher.New(volumewatcher.Config{Pipeline: a.pipeline, State: a.fsm, Detacher: volumewatcher.NewHTTPDetacher(a.fsm),
		Logger: a.log, Registerer: a.reg})
}
