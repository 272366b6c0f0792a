package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"sync"
	"time"

	"github.com/ordoplane/ordo/api"
	"github.com/ordoplane/ordo/commands/eval"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/evaldelete"
	"github.com/ordoplane/ordo/projections/order"
)

// pageRange is a stretch of the evals' creation order still to delete:
// the keys in [from, to), to "" for the end of the table.
type pageRange struct{ from, to string }

// pageResult is the outcome of one page entry.
type pageResult struct {
	page  *events.EvalsPageDeleted
	index uint64
	err   error
}

// deletePages deletes what req.Filter selects, one page per entry (N4),
// with up to req.InFlight entries appended and not yet
// applied. On a snapshot it plans the next page: from the first eval the
// filter selects after the cursor (reading evals up to it) to the PerPage
// + 1th eval from there (counting index keys, reading no eval), and logs
// (filter, from, to, page size); the FSM re-creates that page at apply,
// reading and filtering the evals within [from, to), so
// pages in flight never overlap and raft commits them together. A page
// that stopped before its To at apply (more evals match there than when
// it was planned) leaves the rest of its range to a later page. The
// answer's NextToken is the smallest position not known to be done.
func (s *Server) deletePages(r *http.Request, req api.EvalDeleteRequest, m *gcMetrics) (api.EvalDeleteResponse, error) {
	var resp api.EvalDeleteResponse
	f, _ := evaldelete.Compile(req.Filter) // checked by decodeEvalDelete
	start := time.Now()
	log := s.cfg.Logger.With("filter", req.Filter, "page_size", req.PerPage)
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	cursor := ""
	if req.NextToken != "" {
		cursor, _ = order.ParseToken(req.NextToken)
	}
	todo := []pageRange{{from: cursor}}
	results := make(chan pageResult, req.InFlight)
	var wg sync.WaitGroup
	defer wg.Wait()
	inflight, pages := 0, 0
	var failed error
	for {
		for failed == nil && inflight < req.InFlight && len(todo) > 0 && (req.MaxPages == 0 || pages < req.MaxPages) {
			cmd, ok, err := s.planPage(f, req, &todo)
			if err != nil {
				failed = err
				break
			}
			if !ok {
				continue
			}
			rq := request(r)
			rq.CommandID = "" // each page is its own command
			inflight++
			pages++
			wg.Go(func() {
				out, err := s.cfg.Pipeline.Run(ctx, "eval.delete_page", rq, cmd)
				if err != nil {
					results <- pageResult{err: err}
					return
				}
				page, err := eval.AppliedPage(s.cfg.FSM.Store(), out.Index)
				results <- pageResult{page: page, index: out.Index, err: err}
			})
		}
		if inflight == 0 {
			break
		}
		res := <-results
		inflight--
		if res.err != nil {
			if failed == nil {
				failed = res.err
				cancel()
			}
			continue
		}
		resp.Count += len(res.page.IDs)
		resp.Skipped += res.page.Skipped
		resp.Index = max(resp.Index, res.index)
		m.evalsDeleted.Add(float64(len(res.page.IDs)))
		m.pages.Inc()
		log.Debug("eval delete page applied", "index", res.index, "deleted", len(res.page.IDs), "skipped", res.page.Skipped)
		if p := res.page; p.Next != "" && p.Next != p.To {
			todo = insertRange(todo, pageRange{from: p.Next, to: p.To})
		}
	}
	if failed != nil {
		return resp, failed
	}
	if len(todo) > 0 {
		idx, id, err := order.Split(todo[0].from)
		if err != nil {
			return resp, fmt.Errorf("resume token: %w", err)
		}
		resp.NextToken = order.Token(idx, id)
	}
	log.Info("evals deleted by filter", "deleted", resp.Count, "skipped", resp.Skipped, "next_token", resp.NextToken,
		"index", resp.Index, "pages", pages, "took", time.Since(start))
	return resp, nil
}

// planPage plans the next page of the first range of todo on a snapshot
// and advances that range past it (dropping it when done). It reports
// false when the stretch it looked at held no eval the filter selects
// (nothing to log; the range advanced past it).
func (s *Server) planPage(f *evaldelete.Filter, req api.EvalDeleteRequest, todo *[]pageRange) (eval.DeletePage, bool, error) {
	rg := &(*todo)[0]
	snap := s.cfg.FSM.Store().Snapshot()
	defer snap.Close()
	v := projections.NewView(snap)
	// The first eval the filter selects (reading evals only up to it) ...
	p, err := evaldelete.Walk(v, f, rg.from, rg.to, 1, req.PerPage*evaldelete.ScanFactor, false)
	if err != nil {
		return eval.DeletePage{}, false, fmt.Errorf("plan page at %q: %w", rg.from, err)
	}
	end := p.Next // nothing selected before it
	if p.First != "" {
		// ... and the end of a page of PerPage evals from it, counted on
		// the index alone: the apply reads them, the handler need not.
		if end, err = evaldelete.SpanEnd(v, p.First, rg.to, req.PerPage); err != nil {
			return eval.DeletePage{}, false, fmt.Errorf("plan page at %q: %w", p.First, err)
		}
	}
	cmd := eval.DeletePage{Filter: req.Filter, From: p.First, To: end, PageSize: req.PerPage}
	if end == "" || end == rg.to {
		*todo = (*todo)[1:]
	} else {
		rg.from = end
	}
	return cmd, p.First != "", nil
}

// insertRange adds rg to todo, kept in order of from.
func insertRange(todo []pageRange, rg pageRange) []pageRange {
	i := sort.Search(len(todo), func(i int) bool { return todo[i].from > rg.from })
	return append(todo[:i], append([]pageRange{rg}, todo[i:]...)...)
}
