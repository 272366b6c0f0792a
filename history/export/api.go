package export

import (
	"errors"
	"io"
	"os"
	"time"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/storage/kv"
)

// ForAPI adapts Export to the HTTP API's Exporter hook
// (commands/httpapi.Config): server is the exporting server's node id
// (the cluster id's fallback), version ordo's, dir the parent of the
// scratch store a base state is rebuilt in (created if missing), now the
// clock stamping Created. A range with no events answers 400.
func ForAPI(server, version, dir string, now func() time.Time) func(w io.Writer, src kv.Reader, from, to uint64, state bool) error {
	return func(w io.Writer, src kv.Reader, from, to uint64, state bool) error {
		if state && from > 1 && dir != "" {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
		}
		_, err := Export(w, src, Options{From: from, To: to, Server: server, OrdoVersion: version,
			Created: now(), State: state, ScratchDir: dir})
		if errors.Is(err, ErrNoEvents) {
			return commands.Invalid("from", "%v", err)
		}
		return err
	}
}
