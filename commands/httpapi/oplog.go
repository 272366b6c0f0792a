package httpapi

import (
	"net/http"
	"strconv"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/storage/archive"
	"github.com/ordoplane/ordo/storage/kv"
)

// logPage is the answer of GET /v1/operator/log.
type logPage struct {
	Events []Event
	// NextIndex is the index to pass as from for the next page; 0 at the end.
	NextIndex uint64
	// LastIndex is the newest archived index.
	LastIndex uint64
	// Length is how many events the archive holds.
	Length uint64
}

// maxLogLimit bounds one page of GET /v1/operator/log.
const maxLogLimit = 10000

func parseUintParam(r *http.Request, name string, def uint64) (uint64, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return 0, commands.Invalid(name, "%q is not a non-negative integer", v)
	}
	return n, nil
}

// operatorLog serves GET /v1/operator/log?from=&limit=: archived events in
// commit order, whole entries per page.
func (s *Server) operatorLog(w http.ResponseWriter, r *http.Request) error {
	from, err := parseUintParam(r, "from", 1)
	if err != nil {
		return err
	}
	limit, err := parseUintParam(r, "limit", 100)
	if err != nil {
		return err
	}
	if limit == 0 || limit > maxLogLimit {
		return commands.Invalid("limit", "%d must be between 1 and %d", limit, maxLogLimit)
	}
	snap := s.cfg.FSM.Store().Snapshot()
	defer snap.Close()
	page := logPage{Events: []Event{}}
	if page.LastIndex, err = archive.Last(snap); err != nil {
		return err
	}
	if page.Length, err = archive.Len(snap); err != nil {
		return err
	}
	var cur uint64
	err = archive.Scan(snap, from, 0, func(index uint64, _ uint32, data []byte) error {
		if uint64(len(page.Events)) >= limit && index != cur {
			page.NextIndex = index
			return kv.ErrStop
		}
		e, err := archivedEventJSON(data)
		if err != nil {
			return err
		}
		page.Events = append(page.Events, e)
		cur = index
		return nil
	})
	if err != nil {
		return err
	}
	setIndex(w, page.LastIndex)
	writeJSON(w, http.StatusOK, page)
	return nil
}
