package export

import (
	"errors"
	"io"
	"os"

	"github.com/ordoplane/ordo/clock"
	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/storage/kv"
)

// API is Export for the HTTP API (commands/httpapi.Exporter). ForAPI
// builds the agent's; ordo replay fills one in for its file.
type API struct {
	// Server is the exporting server's node id (the cluster id's
	// fallback); Version is ordo's.
	Server, Version string
	// ClusterID and ClusterIDSource, when set, name the cluster instead
	// of the archive's own record of it (a replayed file's header).
	ClusterID, ClusterIDSource string
	// Dir is the parent of the scratch store a base state is rebuilt in
	// (created if missing).
	Dir string
	// Clock stamps Created; required.
	Clock clock.Clock
	// NoState leaves the base state out of every export: the archive does
	// not start at 1, so no state before it can be rebuilt.
	NoState bool
}

// ForAPI returns the agent's exporter: server is the exporting server's
// node id, version ordo's, dir the parent of the scratch store a base
// state is rebuilt in, c the clock stamping Created.
func ForAPI(server, version, dir string, c clock.Clock) *API {
	return &API{Server: server, Version: version, Dir: dir, Clock: c}
}

// ExportHistory writes the events in [from, to] of the archive in src
// (to 0: to its end) to w as a history file, with the projections at
// from-1 first when state is set. A range with no events answers 400.
func (a *API) ExportHistory(w io.Writer, src kv.Reader, from, to uint64, state bool) error {
	state = state && !a.NoState
	if state && from > 1 && a.Dir != "" {
		if err := os.MkdirAll(a.Dir, 0o755); err != nil {
			return err
		}
	}
	_, err := Export(w, src, Options{From: from, To: to, ClusterID: a.ClusterID, ClusterIDSource: a.ClusterIDSource,
		Server: a.Server, OrdoVersion: a.Version, Created: a.Clock.Now(), State: state, ScratchDir: a.Dir})
	if errors.Is(err, ErrNoEvents) {
		return commands.Invalid("from", "%v", err)
	}
	return err
}
