package summary

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ordoplane/ordo/events"
)

// Change is one field of the entity an event changed. Old is "" when the
// field was unknown or unset, New is "" when the event removed it.
type Change struct {
	Field string
	Old   string
	New   string
}

// Line is what one event did to the entity a timeline is about.
type Line struct {
	Summary string
	Changes []Change
}

// Tracker folds the events of one entity, in commit order, into the last
// known values of the fields their summaries talk about.
type Tracker struct {
	kind, id string
	// ns and job split a job's id "<namespace>/<job>".
	ns, job string
	vals    map[string]string
}

// NewTracker returns a tracker for the entity of kind with id, as the
// history projection names it (a job is "<namespace>/<job id>").
func NewTracker(kind, id string) *Tracker {
	t := &Tracker{kind: kind, id: id, vals: map[string]string{}}
	if kind == events.KindJob {
		t.ns, t.job, _ = strings.Cut(id, "/")
	}
	return t
}

// summariser explains one decoded payload from the step's entity.
type summariser func(s *step, p events.Payload) string

// summarisers holds one summariser per event type; filled by the init of
// each domain's file.
var summarisers = map[string]summariser{}

// reviewed holds the types with sensitive fields whose summariser was
// written to show none of them (registerSensitive); the other such types
// get the generic, redacted line.
var reviewed = map[string]bool{}

func register(name string, fn summariser) {
	if _, dup := summarisers[name]; dup {
		panic("summary: duplicate summariser for " + name)
	}
	summarisers[name] = fn
}

// registerSensitive registers the summariser of a type that declares
// sensitive fields: fn must never render one (its tests check).
func registerSensitive(name string, fn summariser) {
	register(name, fn)
	reviewed[name] = true
}

// Known reports whether event type name has its own summariser (as
// opposed to the generic fallback).
func Known(name string) bool {
	_, ok := summarisers[name]
	return ok
}

// genericLimit bounds the payload JSON the generic fallback shows.
const genericLimit = 400

// Next folds ev into the tracker and returns its line. Events must come in
// commit order.
func (t *Tracker) Next(ev *events.Event) Line {
	fn, ok := summarisers[ev.Type]
	if typ, registered := events.Lookup(ev.Type); !ok || !registered || (len(typ.Sensitive) > 0 && !reviewed[ev.Type]) {
		return Line{Summary: Generic(ev)}
	}
	p, err := events.Decode(ev)
	if err != nil {
		return Line{Summary: fmt.Sprintf("%s v%d: cannot decode the payload: %v", ev.Type, ev.Version, err)}
	}
	s := &step{t: t, ev: ev}
	text := fn(s, p)
	return Line{Summary: text, Changes: s.changes}
}

// Generic returns the fallback summary of ev: its type and its redacted
// payload as compact JSON, cut at a few hundred bytes.
func Generic(ev *events.Event) string {
	m, err := events.Redacted(ev)
	if err != nil {
		return fmt.Sprintf("%s v%d (%v)", ev.Type, ev.Version, err)
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		return fmt.Sprintf("%s v%d (%v)", ev.Type, ev.Version, err)
	}
	s := strings.TrimSuffix(b.String(), "\n")
	if len(s) > genericLimit {
		cut := genericLimit
		for cut > 0 && !isRuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return ev.Type + " " + s
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// step is one event being folded: the tracker and the changes so far.
type step struct {
	t       *Tracker
	ev      *events.Event
	changes []Change
}

// get returns the last known value of field.
func (s *step) get(field string) string { return s.t.vals[field] }

// known reports whether the tracker knows anything about the entity yet.
func (s *step) known() bool { return len(s.t.vals) > 0 }

// set records field's new value and returns the change, or nil when the
// value is the one already known.
func (s *step) set(field, value string) *Change {
	old := s.t.vals[field]
	if old == value {
		return nil
	}
	if value == "" {
		delete(s.t.vals, field)
	} else {
		s.t.vals[field] = value
	}
	s.changes = append(s.changes, Change{Field: field, Old: old, New: value})
	return &s.changes[len(s.changes)-1]
}

// setFamily sets every field "<prefix><k><suffix>" of values and clears
// the known fields of that family that values no longer has, in key order.
func (s *step) setFamily(prefix, suffix string, values map[string]string) []*Change {
	var out []*Change
	for _, k := range sortedKeys(s.family(prefix, suffix)) {
		if _, ok := values[k]; !ok {
			if c := s.set(prefix+k+suffix, ""); c != nil {
				out = append(out, c)
			}
		}
	}
	for _, k := range sortedKeys(values) {
		if c := s.set(prefix+k+suffix, values[k]); c != nil {
			out = append(out, c)
		}
	}
	return out
}

// family returns the known fields "<prefix><k><suffix>", by k.
func (s *step) family(prefix, suffix string) map[string]string {
	out := map[string]string{}
	for f, v := range s.t.vals {
		if strings.HasPrefix(f, prefix) && strings.HasSuffix(f, suffix) && len(f) >= len(prefix)+len(suffix) {
			out[f[len(prefix):len(f)-len(suffix)]] = v
		}
	}
	return out
}

// reset forgets the entity: it was deleted, and a later event with the
// same id starts a new life.
func (s *step) reset() { clear(s.t.vals) }

// arrow renders a change as "old → new", or just the new value when the
// old one was unknown, or "old → (none)" when it was removed.
func arrow(c *Change) string {
	switch {
	case c.Old == "":
		return c.New
	case c.New == "":
		return c.Old + " → (none)"
	}
	return c.Old + " → " + c.New
}

// trans renders "label old → new" for a change, "" for nil.
func trans(label string, c *Change) string {
	if c == nil {
		return ""
	}
	return label + " " + arrow(c)
}

// paren returns " (s)", or "" for an empty s.
func paren(s string) string {
	if s == "" {
		return ""
	}
	return " (" + s + ")"
}

// join joins the non-empty parts with "; ".
func join(parts ...string) string {
	return strings.Join(slices.DeleteFunc(parts, func(p string) bool { return p == "" }), "; ")
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func itoa(n int) string    { return strconv.Itoa(n) }
func utoa(n uint64) string { return strconv.FormatUint(n, 10) }
func btoa(b bool) string   { return strconv.FormatBool(b) }
func plural(n int, w string) string {
	if n == 1 {
		return "1 " + w
	}
	return itoa(n) + " " + w + "s"
}

// counts renders how often each value occurs, "a ×2, b ×1", by value.
func counts(values []string) string {
	n := map[string]int{}
	for _, v := range values {
		if v == "" {
			v = "(unset)"
		}
		n[v]++
	}
	parts := make([]string, 0, len(n))
	for _, v := range sortedKeys(n) {
		parts = append(parts, fmt.Sprintf("%s ×%d", v, n[v]))
	}
	return strings.Join(parts, ", ")
}

// list renders up to max items and "… (+n more)".
func list(items []string, max int) string {
	if len(items) <= max {
		return strings.Join(items, ", ")
	}
	return strings.Join(items[:max], ", ") + fmt.Sprintf(", … (+%d more)", len(items)-max)
}

// leaderTime renders a Unix-nanosecond leader time.
func leaderTime(ns int64) string {
	if ns == 0 {
		return ""
	}
	return time.Unix(0, ns).UTC().Format(time.RFC3339)
}

// jobMatches reports whether (namespace, job) is the tracker's job.
func (s *step) jobMatches(namespace, job string) bool {
	return s.t.kind == events.KindJob && s.t.ns == namespace && s.t.job == job
}
