package evaldelete

import (
	"fmt"
	"sync"

	"github.com/hashicorp/go-bexpr"
	"github.com/hashicorp/go-bexpr/grammar"

	"github.com/ordoplane/ordo/events"
)

// Filter is a compiled eval filter. Expressions made only of ==, != on the
// eval's string fields, and, or, not (the shape of nearly every bulk
// delete: `Status == "pending" and JobID == "x"`) are compiled to direct
// field comparisons, five times cheaper than go-bexpr's reflection; others
// are evaluated by go-bexpr. Both give the same answers (TestFastFilter).
type Filter struct {
	ev   *bexpr.Evaluator
	fast func(e *events.Evaluation) bool
}

// stringFields are the fields the fast path reads, by go-bexpr selector.
var stringFields = map[string]func(e *events.Evaluation) string{
	"ID":           func(e *events.Evaluation) string { return e.ID },
	"Namespace":    func(e *events.Evaluation) string { return e.Namespace },
	"JobID":        func(e *events.Evaluation) string { return e.JobID },
	"Status":       func(e *events.Evaluation) string { return e.Status },
	"Type":         func(e *events.Evaluation) string { return e.Type },
	"TriggeredBy":  func(e *events.Evaluation) string { return e.TriggeredBy },
	"NodeID":       func(e *events.Evaluation) string { return e.NodeID },
	"DeploymentID": func(e *events.Evaluation) string { return e.DeploymentID },
}

// maxParse bounds the parser's work, as go-bexpr's default does.
const maxParse = 2_000_000

// compiled caches the filters Compile compiled, by expression: every
// page of a delete carries the same filter and go-bexpr's parser takes
// hundreds of microseconds (8% of a page's apply before the cache). A
// Filter is immutable, so sharing one is safe and deterministic.
var compiled struct {
	sync.Mutex
	m map[string]*Filter
}

// maxCompiled bounds the cache; past it, the cache starts over.
const maxCompiled = 64

// Compile compiles a filter in Nomad's expression syntax (go-bexpr),
// evaluated on events.Evaluation field names (those of the API); "" is
// nil, which keeps every eval.
func Compile(filter string) (*Filter, error) {
	if filter == "" {
		return nil, nil
	}
	compiled.Lock()
	f, ok := compiled.m[filter]
	compiled.Unlock()
	if ok {
		return f, nil
	}
	f, err := compile(filter)
	if err != nil {
		return nil, err
	}
	compiled.Lock()
	if compiled.m == nil || len(compiled.m) >= maxCompiled {
		compiled.m = map[string]*Filter{}
	}
	compiled.m[filter] = f
	compiled.Unlock()
	return f, nil
}

// compile parses filter into a Filter.
func compile(filter string) (*Filter, error) {
	ev, err := bexpr.CreateEvaluator(filter)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadFilter, err)
	}
	f := &Filter{ev: ev}
	if ast, err := grammar.Parse("", []byte(filter), grammar.MaxExpressions(maxParse)); err == nil {
		if expr, ok := ast.(grammar.Expression); ok {
			f.fast = fastPath(expr)
		}
	}
	return f, nil
}

// fastPath compiles expr to direct comparisons, or returns nil when any
// part of it needs go-bexpr.
func fastPath(expr grammar.Expression) func(e *events.Evaluation) bool {
	switch x := expr.(type) {
	case *grammar.BinaryExpression:
		l, r := fastPath(x.Left), fastPath(x.Right)
		if l == nil || r == nil {
			return nil
		}
		switch x.Operator {
		case grammar.BinaryOpAnd:
			return func(e *events.Evaluation) bool { return l(e) && r(e) }
		case grammar.BinaryOpOr:
			return func(e *events.Evaluation) bool { return l(e) || r(e) }
		}
	case *grammar.UnaryExpression:
		in := fastPath(x.Operand)
		if in == nil || x.Operator != grammar.UnaryOpNot {
			return nil
		}
		return func(e *events.Evaluation) bool { return !in(e) }
	case *grammar.MatchExpression:
		if x.Selector.Type != grammar.SelectorTypeBexpr || len(x.Selector.Path) != 1 || x.Value == nil {
			return nil
		}
		get, ok := stringFields[x.Selector.Path[0]]
		if !ok {
			return nil
		}
		want := x.Value.Raw
		switch x.Operator {
		case grammar.MatchEqual:
			return func(e *events.Evaluation) bool { return get(e) == want }
		case grammar.MatchNotEqual:
			return func(e *events.Evaluation) bool { return get(e) != want }
		}
	}
	return nil
}

// Match reports whether f selects e (a nil f selects every eval).
func Match(f *Filter, e *events.Evaluation) (bool, error) {
	if f == nil {
		return true, nil
	}
	if f.fast != nil {
		return f.fast(e), nil
	}
	ok, err := f.ev.Evaluate(e)
	if err != nil {
		return false, fmt.Errorf("%w: %v", ErrBadFilter, err)
	}
	return ok, nil
}
