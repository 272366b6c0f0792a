package httpapi

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/projections"
)

// blockingParams are a query's index and wait parameters.
type blockingParams struct {
	index uint64
	wait  time.Duration
}

func (s *Server) parseBlocking(r *http.Request) (blockingParams, error) {
	q := r.URL.Query()
	var p blockingParams
	if v := q.Get("index"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return p, commands.Invalid("index", "%q is not a non-negative integer", v)
		}
		p.index = n
	}
	p.wait = s.cfg.DefaultWait
	if v := q.Get("wait"); v != "" {
		d, err := parseWait(v)
		if err != nil {
			return p, commands.Invalid("wait", "%q is not a duration such as 30s or 5m", v)
		}
		p.wait = d
	}
	if p.wait > s.cfg.MaxWait {
		p.wait = s.cfg.MaxWait
	}
	return p, nil
}

// parseWait reads a Go duration, or a bare number of seconds.
func parseWait(v string) (time.Duration, error) {
	if n, err := strconv.ParseUint(v, 10, 64); err == nil {
		return time.Duration(n) * time.Second, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, strconv.ErrSyntax
	}
	return d, nil
}

// query runs read against a snapshot once the index of any of tables
// exceeds the request's index, or when its wait runs out, and writes the
// result with X-Nomad-Index set to that table index — or to the index of
// the last operator snapshot restore, when that is later: the restore
// replaced every table, so a caller blocked at an index it saw before the
// restore is answered the restored state at once. A request for a past
// state (at_index, at_time: attime.go) is answered from that state instead.
func (s *Server) query(w http.ResponseWriter, r *http.Request, tables []string, read func(v projections.View) (any, error)) {
	res, index, err := s.answer(w, r, tables, read)
	if err != nil {
		writeError(w, err)
		return
	}
	setIndex(w, index)
	writeJSON(w, http.StatusOK, res)
}

// answer is the read behind query and queryPage: from the past state the
// request names, with X-Ordo-At-Index set, or a blocking read of the
// latest state.
func (s *Server) answer(w http.ResponseWriter, r *http.Request, tables []string, read func(v projections.View) (any, error)) (any, uint64, error) {
	at, err := historical(r)
	if err != nil {
		return nil, 0, err
	}
	if at != nil {
		res, index, err := s.readAt(r.Context(), at, tables, read)
		if err == nil {
			w.Header().Set(atIndexHeader, strconv.FormatUint(index, 10))
		}
		return res, index, err
	}
	bp, err := s.parseBlocking(r)
	if err != nil {
		return nil, 0, err
	}
	return s.block(r.Context(), bp, tables, read)
}

// startWait starts a blocking query's wait: the channel its deadline
// fires on (nil when bp does not block) and the func that ends the wait.
func (s *Server) startWait(bp blockingParams) (<-chan time.Time, func()) {
	if bp.index == 0 {
		return nil, func() {}
	}
	t := time.NewTimer(bp.wait)
	s.metrics.blocking.Inc()
	return t.C, func() {
		t.Stop()
		s.metrics.blocking.Dec()
	}
}

func (s *Server) block(ctx context.Context, bp blockingParams, tables []string, read func(v projections.View) (any, error)) (any, uint64, error) {
	deadline, stop := s.startWait(bp)
	defer stop()
	notify := s.cfg.FSM.Notifier()
	for {
		// Take the watch channels before reading, so no change is missed.
		chans := make([]<-chan struct{}, len(tables))
		for i, t := range tables {
			chans[i] = notify.Table(t)
		}
		snap := s.cfg.FSM.Store().Snapshot()
		v := projections.NewView(snap)
		index, err := v.RestoredIndex() // a restore replaced every table
		if err != nil {
			snap.Close()
			return nil, 0, err
		}
		for _, t := range tables {
			ti, err := v.TableIndex(t)
			if err != nil {
				snap.Close()
				return nil, 0, err
			}
			index = max(index, ti)
		}
		if bp.index == 0 || index > bp.index || deadline == nil {
			res, err := read(v)
			snap.Close()
			return res, index, err
		}
		snap.Close()
		if !waitAny(ctx, deadline, chans) {
			deadline = nil // time is up: answer with what there is
		}
	}
}

// waitAny waits for one of chans; it returns false when the deadline or
// the context ends the wait first.
func waitAny(ctx context.Context, deadline <-chan time.Time, chans []<-chan struct{}) bool {
	if len(chans) == 1 {
		select {
		case <-chans[0]:
			return true
		case <-deadline:
		case <-ctx.Done():
		}
		return false
	}
	woke := make(chan struct{})
	stop := make(chan struct{})
	defer close(stop)
	for _, ch := range chans {
		go func() {
			select {
			case <-ch:
				select {
				case woke <- struct{}{}:
				case <-stop:
				}
			case <-stop:
			}
		}()
	}
	select {
	case <-woke:
		return true
	case <-deadline:
	case <-ctx.Done():
	}
	return false
}
