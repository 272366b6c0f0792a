package httpapi

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/storage/archive"
)

// errNoExporter answers an export on a server built without one.
var errNoExporter = errors.New("ordo: this server does not export history files")

// exportLog serves GET /v1/operator/log/export?from=&to=&state=: the
// archive's events in [from, to] (to 0 or absent: to the end) streamed as
// a portable history file (Config.Exporter, history/export), from this
// server's own archive at one snapshot. state=false leaves out the
// projections at from-1 that a slice starting after index 1 carries by
// default. Errors found before the first byte answer JSON; an error
// while streaming aborts the response, so the file ends without its
// trailer and a reader reports it truncated.
func (s *Server) exportLog(w http.ResponseWriter, r *http.Request) error {
	if err := refuseHistorical(r, "an export is a range of the archive (from, to), not a past state"); err != nil {
		return err
	}
	from, err := parseUintParam(r, "from", 1)
	if err != nil {
		return err
	}
	to, err := parseUintParam(r, "to", 0)
	if err != nil {
		return err
	}
	from = max(from, 1)
	if to != 0 && to < from {
		return commands.Invalid("to", "%d is before from, %d", to, from)
	}
	state := true
	if v := r.URL.Query().Get("state"); v != "" {
		if state, err = strconv.ParseBool(v); err != nil {
			return commands.Invalid("state", "%q is not true or false", v)
		}
	}
	if s.cfg.Exporter == nil {
		return notImplemented{errNoExporter}
	}
	snap := s.cfg.FSM.Store().Snapshot()
	defer snap.Close()
	last, err := archive.Last(snap)
	if err != nil {
		return err
	}
	if from > last {
		return commands.Invalid("from", "%d is past the archive's last index, %d", from, last)
	}
	end := last
	if to != 0 && to < last {
		end = to
	}
	lw := &lazyWriter{w: w, start: func() {
		h := w.Header()
		h.Set("Content-Type", "application/octet-stream")
		h.Set("Content-Disposition", fmt.Sprintf("attachment; filename=\"ordo-%d-%d.olog\"", from, end))
		setIndex(w, last)
	}}
	if err := s.cfg.Exporter.ExportHistory(lw, snap, from, to, state); err != nil {
		if !lw.started {
			return err
		}
		s.cfg.Logger.Warn("history export aborted mid-stream", "from", from, "to", to, "err", err)
		panic(http.ErrAbortHandler)
	}
	return nil
}

// lazyWriter sets the response's headers on the first write, so a
// handler can still answer an error before it.
type lazyWriter struct {
	w       http.ResponseWriter
	start   func()
	started bool
}

func (l *lazyWriter) Write(b []byte) (int, error) {
	if !l.started {
		l.started = true
		l.start()
		l.w.WriteHeader(http.StatusOK)
	}
	return l.w.Write(b)
}
