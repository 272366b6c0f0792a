package httpapi

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/job"
	"github.com/ordoplane/ordo/commands/namespace"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/history"
	"github.com/ordoplane/ordo/projections/namespaces"
)

// History pages: per_page defaults to defaultHistoryPage and may not pass
// maxHistoryPage; a longer history is read with next_token.
const (
	defaultHistoryPage = 1000
	maxHistoryPage     = 10000
)

// historyTables are what a blocking history read waits on.
var historyTables = []string{history.Table}

// entityHistory serves GET /v1/history/{kind}/{id...}: every event that
// touched the entity, oldest first (reverse=true: newest first), each with
// a summary and the fields it changed; paged with per_page and
// next_token (X-Nomad-NextToken), bounded with from_index/to_index and
// since/until, payloads (redacted) with payload=true, and blocking on the
// history table like every read. related=true, for a job, adds the events
// of its evals, allocations and deployments, each line naming its entity
// (history.Query.Related); per_page then counts events, not lines.
func (s *Server) entityHistory(w http.ResponseWriter, r *http.Request) error {
	q, err := parseHistoryQuery(r, time.Now())
	if err != nil {
		return err
	}
	// Events are read from the live store's archive: a past state's view
	// (at_index) may hold the rows without the archive behind them.
	q.Archive = s.cfg.FSM.Store()
	s.queryPage(w, r, historyTables, func(v projections.View) (any, error) {
		pg, err := history.Timeline(v, q)
		if err != nil {
			return nil, err
		}
		var next string
		if pg.Next != (history.Pos{}) {
			next = pg.Next.String()
		}
		return page{items: pg.Events, next: next}, nil
	})
	return nil
}

// parseHistoryQuery reads a history request; now, the serving server's
// clock (the leader's, unless the read is stale), anchors relative times.
// A bad parameter is a *commands.ValidationError naming it.
func parseHistoryQuery(r *http.Request, now time.Time) (history.Query, error) {
	var q history.Query
	kind, id, err := historyEntity(r)
	if err != nil {
		return q, err
	}
	q.Kind, q.ID = kind, id
	if q.FromIndex, err = parseUintParam(r, "from_index", 0); err != nil {
		return q, err
	}
	if q.ToIndex, err = parseUintParam(r, "to_index", 0); err != nil {
		return q, err
	}
	if q.ToIndex > 0 && q.ToIndex < q.FromIndex {
		return q, commands.Invalid("to_index", "%d is before from_index %d", q.ToIndex, q.FromIndex)
	}
	if q.Since, err = historyTime(r, "since", now); err != nil {
		return q, err
	}
	if q.Until, err = historyTime(r, "until", now); err != nil {
		return q, err
	}
	if q.Until != 0 && q.Until < q.Since {
		return q, commands.Invalid("until", "%s is before since", r.URL.Query().Get("until"))
	}
	qv := r.URL.Query()
	for _, b := range []struct {
		name string
		to   *bool
	}{{"reverse", &q.Reverse}, {"payload", &q.Payload}, {"related", &q.Related}} {
		if v := qv.Get(b.name); v != "" {
			if *b.to, err = strconv.ParseBool(v); err != nil {
				return q, commands.Invalid(b.name, "%q is not true or false", v)
			}
		}
	}
	if q.Related && q.Kind != events.KindJob {
		return q, commands.Invalid("related", "applies to job timelines only (a job's evals, allocations and deployments)")
	}
	q.PerPage = defaultHistoryPage
	if v := qv.Get("per_page"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > maxHistoryPage {
			return q, commands.Invalid("per_page", "%q is not an integer from 0 to %d", v, maxHistoryPage)
		}
		if n > 0 {
			q.PerPage = n
		}
	}
	if v := qv.Get("next_token"); v != "" {
		if q.Next, err = history.ParsePos(v); err != nil || q.Next == (history.Pos{}) {
			return q, commands.Invalid("next_token", "%q is not a token this server handed out", v)
		}
	}
	return q, nil
}

// historyEntity returns the kind and the history id of the entity in r's
// path. A job is named "<namespace>/<job id>" or by its id with
// ?namespace= (default "default"); when ?namespace= is given, the whole
// path after the kind is the job id, slashes included.
func historyEntity(r *http.Request) (string, string, error) {
	kind, id := r.PathValue("kind"), r.PathValue("id")
	if !history.KnownKind(kind) {
		return "", "", commands.Invalid("kind", "%q is not an entity kind (%s)", kind, strings.Join(history.Kinds, ", "))
	}
	switch {
	case id == "":
		return "", "", commands.Invalid("id", "must not be empty")
	case strings.ContainsAny(id, "\x00"):
		return "", "", commands.Invalid("id", "%q contains a NUL byte", id)
	}
	if kind != events.KindJob {
		return kind, id, nil
	}
	ns := r.URL.Query().Get("namespace")
	jobID := id
	if ns == "" {
		ns = namespaces.Default
		if before, after, ok := strings.Cut(id, "/"); ok {
			ns, jobID = before, after
		}
	}
	if err := namespace.ValidName("namespace", ns); err != nil {
		return "", "", err
	}
	if err := job.ValidID("id", jobID); err != nil {
		return "", "", err
	}
	return kind, history.JobID(ns, jobID), nil
}

// historyTime reads a time parameter: an RFC 3339 time, or a duration
// such as 2h or 90m meaning that long before now. Absent is 0 (no bound).
func historyTime(r *http.Request, name string, now time.Time) (int64, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return 0, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		return t.UnixNano(), nil
	}
	if d, err := time.ParseDuration(v); err == nil && d >= 0 {
		return now.Add(-d).UnixNano(), nil
	}
	return 0, commands.Invalid(name, "%q is neither an RFC 3339 time (2026-11-30T14:02:00Z) nor a duration ago (2h)", v)
}
