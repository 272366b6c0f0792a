package history

import (
	"errors"
	"fmt"
	"time"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/history/summary"
	"github.com/ordoplane/ordo/storage/archive"
	"github.com/ordoplane/ordo/storage/kv"
)

// Exists reports whether any event touched the entity.
func Exists(v projections.View, kind, id string) (bool, error) {
	found := false
	err := v.Scan(Table, EntityPrefix(kind, id), false, func(string, projections.Row) error {
		found = true
		return kv.ErrStop
	})
	return found, err
}

// Scan calls fn with the position of each event that touched the entity,
// in commit order (newest first when reverse is set). fn may return
// kv.ErrStop to end early.
func Scan(v projections.View, kind, id string, reverse bool, fn func(Pos) error) error {
	prefix := EntityPrefix(kind, id)
	err := v.Scan(Table, prefix, reverse, func(key string, _ projections.Row) error {
		p, err := parseSuffix(key[len(prefix):])
		if err != nil {
			return err
		}
		return fn(p)
	})
	if errors.Is(err, kv.ErrStop) {
		return nil
	}
	return err
}

// Query selects a page of one entity's timeline.
type Query struct {
	// Kind and ID name the entity as the projection does (a job's ID is
	// JobID(namespace, id)).
	Kind, ID string
	// FromIndex and ToIndex bound the events' raft indexes, both
	// inclusive; 0 leaves that end open.
	FromIndex, ToIndex uint64
	// Since and Until bound the events' leader times, Unix nanoseconds,
	// both inclusive; 0 leaves that end open.
	Since, Until int64
	// Reverse lists the newest event first.
	Reverse bool
	// PerPage bounds the page; 0 answers every event selected.
	PerPage int
	// Next resumes at the event a previous page's Next named; the zero
	// Pos starts at the first (or, reversed, the newest) event.
	Next Pos
	// Payload adds each event's redacted payload.
	Payload bool
	// Related, for a job only, adds the events of its evaluations,
	// allocations and deployments (Members) to its own, each line naming
	// the entity it is about (Event.EntityKind, EntityID). PerPage then
	// counts events: an event that touched several of them shows a line
	// for each, on the same page.
	Related bool
	// Archive is where the events are read from; nil reads them through
	// the view. A view of a past state (a time-travel scratch store) holds
	// projections without the whole archive behind them: pass the live
	// store, whose archive is append-only and so holds every event a past
	// view's rows name.
	Archive kv.Reader
}

// Event is one event of a timeline as the API shows it.
type Event struct {
	Index         uint64
	Seq           uint32
	Time          time.Time
	Type          string
	Version       uint16
	Actor         string `json:",omitempty"`
	CorrelationID string `json:",omitempty"`
	// EntityKind and EntityID name the entity the line is about, on a
	// related timeline (Query.Related): the job itself, or one of its
	// evals, allocations or deployments.
	EntityKind string `json:",omitempty"`
	EntityID   string `json:",omitempty"`
	// Summary says in one line what the event did to the entity.
	Summary string
	// Changes lists the entity's fields the event changed, old and new.
	Changes []summary.Change
	// Payload is the event's redacted payload, when the query asked.
	Payload map[string]any `json:",omitempty"`
}

// Page is one page of a timeline.
type Page struct {
	Events []Event
	// Next is the position of the first event past the page, for
	// Query.Next; the zero Pos when the page is the last.
	Next Pos
}

// ErrNoHistory is returned by Timeline for an entity no event touched.
var ErrNoHistory = fmt.Errorf("no event touched it: %w", projections.ErrNotFound)

// Timeline answers q: the entity's events, in commit order or reversed,
// with a summary and changes each. What changed is computed by folding
// every event of the entity from its first, so a page that starts
// mid-history (or a time window) still shows the right old values. The
// answer wraps ErrNoHistory (and so projections.ErrNotFound) when no event
// ever touched the entity, whatever the bounds.
func Timeline(v projections.View, q Query) (Page, error) {
	if q.PerPage < 0 {
		return Page{}, fmt.Errorf("history: negative page size %d", q.PerPage)
	}
	if q.Related {
		if q.Kind != events.KindJob {
			return Page{}, fmt.Errorf("history: related events are a job's, not a %s's", q.Kind)
		}
		return relatedTimeline(v, q)
	}
	var positions []Pos
	if err := Scan(v, q.Kind, q.ID, false, func(p Pos) error {
		positions = append(positions, p)
		return nil
	}); err != nil {
		return Page{}, err
	}
	if len(positions) == 0 {
		return Page{}, fmt.Errorf("%s %q: %w", q.Kind, q.ID, ErrNoHistory)
	}
	src := q.Archive
	if src == nil {
		src = v.Reader()
	}
	tr := summary.NewTracker(q.Kind, q.ID)
	sel := newSelection(q)
	for _, p := range positions {
		if q.ToIndex > 0 && p.Index > q.ToIndex {
			break
		}
		if q.Reverse && q.Next != (Pos{}) && q.Next.Less(p) {
			break // past the page's start, which is the newest event shown
		}
		ev, err := readEvent(src, p)
		if err != nil {
			return Page{}, err
		}
		var line summary.Line
		if ev != nil {
			line = tr.Next(ev)
		}
		if !q.selects(p, ev) {
			continue
		}
		if done := sel.add(p, ev, line); done {
			break
		}
	}
	return sel.page(q), nil
}

// readEvent reads the archived event at p; nil when the archive no longer
// holds it.
func readEvent(r kv.Reader, p Pos) (*events.Event, error) {
	data, err := r.Get(archive.Key(p.Index, p.Seq))
	if errors.Is(err, kv.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("history: read event %s: %w", p, err)
	}
	ev, err := events.DecodeEvent(data)
	if err != nil {
		return nil, fmt.Errorf("history: event %s: %w", p, err)
	}
	return ev, nil
}

// selects reports whether the event at p (nil: no longer archived) is
// within q's bounds; the page position is the selection's business.
func (q *Query) selects(p Pos, ev *events.Event) bool {
	if p.Index < q.FromIndex || (q.ToIndex > 0 && p.Index > q.ToIndex) {
		return false
	}
	if q.Since == 0 && q.Until == 0 {
		return true
	}
	if ev == nil {
		return false // its time is unknown
	}
	return ev.Time >= q.Since && (q.Until == 0 || ev.Time <= q.Until)
}

// item is a selected event waiting to be shown.
type item struct {
	pos  Pos
	ev   *events.Event
	line summary.Line
	// lines, on a related timeline, replace line: one per entity shown.
	lines []entityLine
}

// selection keeps the events of the page being built: in commit order up
// to one past the page, or, reversed, the newest page-plus-one seen so far
// (a ring, so a long history costs no memory).
type selection struct {
	reverse bool
	limit   int // PerPage+1, or 0 for no limit
	next    Pos
	items   []item
	start   int // the ring's oldest item, reversed with a limit
}

func newSelection(q Query) *selection {
	s := &selection{reverse: q.Reverse, next: q.Next}
	if q.PerPage > 0 {
		s.limit = q.PerPage + 1
	}
	return s
}

// add offers a selected event in commit order and reports whether the page
// is complete (nothing later can change it).
func (s *selection) add(p Pos, ev *events.Event, line summary.Line) bool {
	return s.addItem(item{pos: p, ev: ev, line: line})
}

// addLines is add for an event of a related timeline, with its lines.
func (s *selection) addLines(p Pos, ev *events.Event, lines []entityLine) bool {
	return s.addItem(item{pos: p, ev: ev, lines: lines})
}

func (s *selection) addItem(it item) bool {
	p := it.pos
	if !s.reverse {
		if s.next != (Pos{}) && p.Less(s.next) {
			return false
		}
		s.items = append(s.items, it)
		return s.limit > 0 && len(s.items) == s.limit
	}
	if s.limit == 0 || len(s.items) < s.limit {
		s.items = append(s.items, it)
		return false
	}
	s.items[s.start] = it
	s.start = (s.start + 1) % s.limit
	return false
}

// page renders the selection: the page's events in the asked order and the
// position of the one past it.
func (s *selection) page(q Query) Page {
	ordered := make([]item, 0, len(s.items))
	if s.reverse {
		for i := len(s.items) - 1; i >= 0; i-- {
			ordered = append(ordered, s.items[(s.start+i)%len(s.items)])
		}
	} else {
		ordered = s.items
	}
	var pg Page
	if s.limit > 0 && len(ordered) == s.limit {
		pg.Next = ordered[s.limit-1].pos
		ordered = ordered[:s.limit-1]
	}
	pg.Events = make([]Event, 0, len(ordered))
	for _, it := range ordered {
		if it.lines == nil {
			pg.Events = append(pg.Events, render(it, q.Payload))
			continue
		}
		for _, l := range it.lines {
			e := render(item{pos: it.pos, ev: it.ev, line: l.line}, q.Payload)
			e.EntityKind, e.EntityID = l.entity.Kind, l.entity.ID
			pg.Events = append(pg.Events, e)
		}
	}
	return pg
}

func render(it item, payload bool) Event {
	if it.ev == nil {
		return Event{Index: it.pos.Index, Seq: it.pos.Seq, Type: "(not archived)",
			Summary: "the archive no longer holds this event", Changes: []summary.Change{}}
	}
	ev := it.ev
	e := Event{Index: ev.Index, Seq: ev.Seq, Time: time.Unix(0, ev.Time).UTC(), Type: ev.Type, Version: ev.Version,
		Actor: ev.Actor, CorrelationID: ev.CorrelationID, Summary: it.line.Summary, Changes: it.line.Changes}
	if e.Changes == nil {
		e.Changes = []summary.Change{}
	}
	if payload {
		// A payload this build cannot decode (an unknown type) is left
		// out; the summary says why.
		if m, err := events.Redacted(ev); err == nil {
			e.Payload = m
		}
	}
	return e
}
