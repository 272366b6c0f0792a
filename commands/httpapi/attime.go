package httpapi

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/httpapi/ui"
	"github.com/ordoplane/ordo/projections"
)

// atIndexHeader names, on an answer from a past state, the index it is at.
const atIndexHeader = "X-Ordo-At-Index"

// History serves reads of past states; history/timetravel implements it.
type History interface {
	// View returns the projections as they stood once index was applied,
	// and the function that releases them. index is in [1, applied]. When
	// ctx carries a projections.ReadSet, View may hold only the
	// projections owning its tables, and must call its Stray (by release)
	// if the read touched another table.
	View(ctx context.Context, index uint64) (projections.View, func(), error)
	// ResolveTime returns the last applied index whose entry's leader time
	// is at or before t; ok is false when the first entry is after t.
	ResolveTime(t time.Time) (index uint64, ok bool, err error)
}

// HistoryStatus is a History that says what past it serves and how: the
// answer of GET /v1/operator/history.
type HistoryStatus interface {
	History
	Status() any
}

// WithHistory returns s as a handler on which every read takes at_index=N
// or at_time=RFC3339 and answers from the state at that point (query and
// queryPage, through the request's context), with X-Nomad-Index and
// X-Ordo-At-Index set to that index. A historical request is refused with
// 400 when it writes (any method but GET and HEAD: nothing is appended),
// when it also asks to block (index, wait), and when its endpoint does not
// read projections (the event stream, the log, agent and status
// endpoints). Requests without either parameter go to s unchanged. When h
// is a HistoryStatus, GET /v1/operator/history answers its Status.
func (s *Server) WithHistory(h History) http.Handler {
	if hs, ok := h.(HistoryStatus); ok {
		s.historyStatus.Store(&hs)
	}
	return endpoint(func(w http.ResponseWriter, r *http.Request) error {
		// The UI's own URLs carry at_index for its pages to read with.
		if strings.HasPrefix(r.URL.Path, ui.Prefix) {
			s.ServeHTTP(w, r)
			return nil
		}
		at, err := parseAt(r)
		if err != nil {
			return err
		}
		if at == nil {
			s.ServeHTTP(w, r)
			return nil
		}
		at.history = h
		ctx, cancel := context.WithCancel(context.WithValue(r.Context(), atKey{}, at))
		defer cancel()
		hw := &historicalWriter{ResponseWriter: w, at: at, path: r.URL.Path, cancel: cancel}
		s.ServeHTTP(hw, r.WithContext(ctx))
		if !hw.wrote {
			hw.WriteHeader(http.StatusOK)
		}
		return nil
	})
}

// atRequest is a request's at_index or at_time.
type atRequest struct {
	// field is the parameter given: at_index or at_time.
	field   string
	index   uint64
	time    time.Time
	history History
}

type atKey struct{}

// refuseHistorical returns the 400 refusing a historical request
// (at_index, at_time) to an endpoint that only serves the current state,
// saying why; nil for a request of the current state. Such an endpoint
// streams what it reads from the store itself, so the guard on historical
// answers (historicalWriter) would only cut its stream short.
func refuseHistorical(r *http.Request, why string) error {
	at, _ := r.Context().Value(atKey{}).(*atRequest)
	if at == nil {
		return nil
	}
	return commands.Invalid(at.field, "%s", why)
}

// parseAt reads a request's at_index or at_time; nil when it has neither.
// The errors name the parameter at fault.
func parseAt(r *http.Request) (*atRequest, error) {
	q := r.URL.Query()
	if !q.Has("at_index") && !q.Has("at_time") {
		return nil, nil
	}
	at := &atRequest{field: "at_index"}
	switch {
	case q.Has("at_index") && q.Has("at_time"):
		return nil, commands.Invalid("at_time", "give at_index or at_time, not both")
	case q.Has("at_index"):
		v := q.Get("at_index")
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil || n == 0 {
			return nil, commands.Invalid("at_index", "%q is not a positive integer", v)
		}
		at.index = n
	default:
		at.field = "at_time"
		v := q.Get("at_time")
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			return nil, commands.Invalid("at_time", "%q is not an RFC 3339 time such as 2026-11-30T14:02:00Z", v)
		}
		at.time = t
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return nil, commands.Invalid(at.field, "writes are refused on a historical view")
	}
	for _, p := range []string{"index", "wait"} {
		if q.Has(p) {
			return nil, commands.Invalid(p, "a blocking query cannot read a past state: drop %s or %s", p, at.field)
		}
	}
	return at, nil
}

// historical returns the request's at_index or at_time. A request that
// has one but reached the server without WithHistory is refused: it must
// never be answered from the live state.
func historical(r *http.Request) (*atRequest, error) {
	if at, ok := r.Context().Value(atKey{}).(*atRequest); ok {
		return at, nil
	}
	at, err := parseAt(r)
	if err != nil || at == nil {
		return nil, err
	}
	return nil, commands.Invalid(at.field, "this server does not serve past states")
}

// readAt runs read, which declares tables, against the state the request
// names and returns its result and index.
func (s *Server) readAt(ctx context.Context, at *atRequest, tables []string, read func(v projections.View) (any, error)) (any, uint64, error) {
	applied := s.cfg.FSM.Applied()
	index := at.index
	if at.field == "at_time" {
		i, ok, err := at.history.ResolveTime(at.time)
		if err != nil {
			return nil, 0, err
		}
		if !ok {
			return nil, 0, commands.Invalid("at_time", "%s is before the first entry", at.time.Format(time.RFC3339Nano))
		}
		index = min(i, applied)
	} else if index > applied {
		return nil, 0, commands.Invalid("at_index", "%d is beyond the applied index %d", index, applied)
	}
	// Ask for the projections owning tables only; if the read strays
	// outside them, its answer is incomplete: read again from them all.
	rs := &projections.ReadSet{Tables: tables}
	res, err := readPast(projections.WithReadSet(ctx, rs), at.history, index, read)
	if err == nil && rs.Strayed() {
		res, err = readPast(ctx, at.history, index, read)
	}
	return res, index, notServed(at.field, err)
}

// pastNotServed is a History's error for an index it does not serve
// (history/timetravel.NotServedError): Retryable when it will later (the
// history is being indexed).
type pastNotServed interface {
	error
	Retryable() bool
}

// unavailableError is a historical read to ask again later: 503, with the
// body naming the parameter (writeError).
type unavailableError struct{ *commands.ValidationError }

func (e *unavailableError) Unwrap() error { return e.ValidationError }

// notServed turns a History's refusal of an index into an answer naming
// field: 503 while the index is being indexed, 400 when it will never be
// served (pruned, or before the history held). Other errors pass.
func notServed(field string, err error) error {
	var ns pastNotServed
	if !errors.As(err, &ns) {
		return err
	}
	var ve *commands.ValidationError
	errors.As(commands.Invalid(field, "%s", ns.Error()), &ve)
	if ns.Retryable() {
		return &unavailableError{ve}
	}
	return ve
}

// readPast runs read against the state at index.
func readPast(ctx context.Context, h History, index uint64, read func(v projections.View) (any, error)) (any, error) {
	v, release, err := h.View(ctx, index)
	if err != nil {
		return nil, err
	}
	defer release()
	return read(v)
}

// historicalWriter guards the answer to a historical request: an endpoint
// that answered it successfully without reading a past state (so without
// setting X-Ordo-At-Index) is answering from the live state, so its answer
// is replaced by a 400, the rest of what it writes is dropped and its
// context is cancelled (so a stream stops). An answer forwarded from the
// leader carries the leader's header and passes.
type historicalWriter struct {
	http.ResponseWriter
	at      *atRequest
	path    string
	cancel  context.CancelFunc
	wrote   bool
	refused bool
}

// errRefused is what a refused endpoint's writes return.
var errRefused = errors.New("httpapi: answer refused on a historical view")

func (w *historicalWriter) WriteHeader(code int) {
	if w.wrote {
		return
	}
	w.wrote = true
	if code < 300 && w.Header().Get(atIndexHeader) == "" {
		w.refused = true
		for _, h := range []string{"X-Nomad-Index", "X-Nomad-NextToken"} {
			w.Header().Del(h)
		}
		// A ResponseWriter method returns no error: the refusal is written here.
		writeError(w.ResponseWriter, commands.Invalid(w.at.field, "%s does not serve past states", w.path))
		w.cancel()
		return
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *historicalWriter) Write(b []byte) (int, error) {
	if !w.wrote {
		w.WriteHeader(http.StatusOK)
	}
	if w.refused {
		return 0, errRefused
	}
	return w.ResponseWriter.Write(b)
}

// Flush implements http.Flusher for answers that pass.
func (w *historicalWriter) Flush() {
	if !w.wrote {
		w.WriteHeader(http.StatusOK)
	}
	if f, ok := w.ResponseWriter.(http.Flusher); ok && !w.refused {
		f.Flush()
	}
}

// historyStatusHandler answers GET /v1/operator/history: what past the
// server serves and how, from the History given to WithHistory.
func (s *Server) historyStatusHandler(w http.ResponseWriter, r *http.Request) error {
	hs := s.historyStatus.Load()
	if hs == nil {
		return &notFoundPath{path: r.URL.Path + " (this server serves no past states)"}
	}
	writeJSON(w, http.StatusOK, (*hs).Status())
	return nil
}
