package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"github.com/hashicorp/go-bexpr"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/order"
)

// pageQuery is what a paged list request asks for: Nomad's namespace,
// prefix, filter, per_page, next_token and reverse parameters.
type pageQuery struct {
	// namespace is the namespace parameter: "default" when absent, "*" for all.
	namespace string
	prefix    string
	filter    *bexpr.Evaluator
	perPage   int
	// from is the key next_token names (an order.Key for creation-ordered
	// lists, a table key for lists in id order); "" for the first page.
	from string
	// reverse lists newest first: reverse=true, or the seed's
	// ascending=true, the same switch (N20).
	reverse bool
}

// parsePageQuery reads the parameters of a creation-ordered list, whose
// next_token is an order.Token; a bad one is a *commands.ValidationError
// naming it.
func parsePageQuery(r *http.Request) (pageQuery, error) {
	return parsePage(r, func(token string) (string, bool) {
		key, err := order.ParseToken(token)
		return key, err == nil
	})
}

// parsePage reads a list request's parameters; tokenKey turns a next_token
// into the key to resume at, false when this server never hands it out. A
// bad parameter is a *commands.ValidationError naming it.
func parsePage(r *http.Request, tokenKey func(token string) (string, bool)) (pageQuery, error) {
	q := r.URL.Query()
	p := pageQuery{namespace: q.Get("namespace"), prefix: q.Get("prefix")}
	if p.namespace == "" {
		p.namespace = "default"
	}
	for _, name := range []string{"reverse", "ascending"} {
		v := q.Get(name)
		if v == "" {
			continue
		}
		b, err := strconv.ParseBool(v)
		if err != nil {
			return p, commands.Invalid(name, "%q is not true or false", v)
		}
		p.reverse = p.reverse || b
	}
	if v := q.Get("per_page"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return p, commands.Invalid("per_page", "%q is not a non-negative integer", v)
		}
		p.perPage = n
	}
	if v := q.Get("next_token"); v != "" {
		key, ok := tokenKey(v)
		if !ok {
			return p, commands.Invalid("next_token", "%q is not a token this server handed out", v)
		}
		p.from = key
	}
	if v := q.Get("filter"); v != "" {
		ev, err := bexpr.CreateEvaluator(v)
		if err != nil {
			return p, commands.Invalid("filter", "%v", err)
		}
		p.filter = ev
	}
	return p, nil
}

// errPageFull stops a scan once a page has one item past per_page.
var errPageFull = errors.New("page full")

// pager collects one page of a list in order, applying the filter to each
// item's JSON shape, and remembers the token of the first item past it.
type pager struct {
	q     pageQuery
	items []any
	next  string
}

func newPager(q pageQuery) *pager { return &pager{q: q, items: []any{}} }

// add offers the item created at createIndex with id, shown as shape, to
// a creation-ordered list. It returns errPageFull when the page is
// complete, a *commands.ValidationError naming filter when the filter
// cannot be evaluated on it.
func (p *pager) add(createIndex uint64, id string, shape any) error {
	full, err := p.offer(shape)
	if full {
		p.next = order.Token(createIndex, id)
	}
	return err
}

// addToken is add for lists in id order, whose items are their own page
// tokens: token resumes the list at this item.
func (p *pager) addToken(token string, shape any) error {
	full, err := p.offer(shape)
	if full {
		p.next = token
	}
	return err
}

// offer appends shape to the page if the filter keeps it, and reports
// whether it is the first kept item past the page (err is then
// errPageFull).
func (p *pager) offer(shape any) (full bool, err error) {
	if p.q.filter != nil {
		ok, err := matches(p.q.filter, shape)
		if err != nil {
			return false, err
		}
		if !ok {
			return false, nil
		}
	}
	if p.q.perPage > 0 && len(p.items) == p.q.perPage {
		return true, errPageFull
	}
	p.items = append(p.items, shape)
	return false, nil
}

// page is a list answer and its next token.
type page struct {
	items any
	next  string
}

// result returns the page once the scan ended with err.
func (p *pager) result(err error) (any, error) {
	if err != nil && !errors.Is(err, errPageFull) {
		return nil, err
	}
	return page{items: p.items, next: p.next}, nil
}

// matches evaluates a filter on shape's JSON form, as Nomad's filters see
// objects: field names as in the API, numbers as numbers.
func matches(f *bexpr.Evaluator, shape any) (bool, error) {
	b, err := json.Marshal(shape)
	if err != nil {
		return false, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return false, err
	}
	ok, err := f.Evaluate(doc)
	if err != nil {
		return false, commands.Invalid("filter", "%v", err)
	}
	return ok, nil
}

// queryPage is query for paged lists: read returns a page (via
// pager.result), whose next token is sent as X-Nomad-NextToken. A page of
// a past state (at_index, at_time) resumes with the same parameter.
func (s *Server) queryPage(w http.ResponseWriter, r *http.Request, tables []string, read func(v projections.View) (any, error)) {
	res, index, err := s.answer(w, r, tables, read)
	if err != nil {
		writeError(w, err)
		return
	}
	pg, _ := res.(page)
	if pg.next != "" {
		w.Header().Set("X-Nomad-NextToken", pg.next)
	}
	setIndex(w, index)
	writeJSON(w, http.StatusOK, pg.items)
}

// queryList is query for the lists that are not paged: read returns every
// item's JSON shape, of which the answer keeps those the filter parameter
// selects (Nomad's filter expression; a bad one is a 400 naming filter).
func queryList[S any](s *Server, w http.ResponseWriter, r *http.Request, tables []string, read func(v projections.View) ([]S, error)) error {
	f, err := listFilter(r)
	if err != nil {
		return err
	}
	s.query(w, r, tables, func(v projections.View) (any, error) {
		list, err := read(v)
		if err != nil {
			return nil, err
		}
		return filterList(f, list)
	})
	return nil
}

// listShapes returns read's items, from v and the prefix parameter, in
// their JSON shape: the read of queryList for lists by prefix.
func listShapes[T, S any](r *http.Request, read func(v projections.View, prefix string) ([]T, error), shape func(T) S) func(v projections.View) ([]S, error) {
	prefix := r.URL.Query().Get("prefix")
	return func(v projections.View) ([]S, error) {
		list, err := read(v, prefix)
		if err != nil {
			return nil, err
		}
		out := make([]S, 0, len(list))
		for _, it := range list {
			out = append(out, shape(it))
		}
		return out, nil
	}
}

// listFilter reads the filter parameter of a list that is not paged; a bad
// expression is a *commands.ValidationError naming filter.
func listFilter(r *http.Request) (*bexpr.Evaluator, error) {
	v := r.URL.Query().Get("filter")
	if v == "" {
		return nil, nil
	}
	ev, err := bexpr.CreateEvaluator(v)
	if err != nil {
		return nil, commands.Invalid("filter", "%v", err)
	}
	return ev, nil
}

// filterList keeps the items of list that f selects on their JSON shape
// (all of them when f is nil), never returning nil.
func filterList[T any](f *bexpr.Evaluator, list []T) ([]T, error) {
	out := make([]T, 0, len(list))
	for _, it := range list {
		if f != nil {
			ok, err := matches(f, it)
			if err != nil {
				return nil, err
			}
			if !ok {
				continue
			}
		}
		out = append(out, it)
	}
	return out, nil
}
