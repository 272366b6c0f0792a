package rerun

import (
	"bytes"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/processors/scheduler"
)

// Kind says what part of a plan a Change is about.
type Kind string

// The kinds of Change.
const (
	KindPlacement  Kind = "placement"
	KindStop       Kind = "stop"
	KindUpdate     Kind = "update"
	KindDeployment Kind = "deployment"
	KindFollowUp   Kind = "follow-up"
	KindBlocked    Kind = "blocked-eval"
	KindQueued     Kind = "queued"
	KindFailed     Kind = "failed"
	KindSnapshot   Kind = "snapshot-index"
	// KindOrder: the same items in another order (plans must encode to
	// the same bytes, so order is part of the decision).
	KindOrder Kind = "order"
)

// Change is one way the recomputed plan diverges from the recorded one.
type Change struct {
	Kind Kind
	// ID is the allocation, deployment or eval id; the task group for
	// queued and failed; the list for order.
	ID string
	// Recorded and Recomputed say which side has the item; both when it
	// differs field by field.
	Recorded, Recomputed bool
	// Fields are the differing fields when both sides have the item, or
	// the fields that identify it (node, name, description…) when one
	// side lacks it.
	Fields []Field
}

// Field is one field of a Change, as each side has it ("" when absent).
type Field struct {
	Name                 string
	Recorded, Recomputed string
}

// Report is how a recomputed plan differs from the decision the log
// recorded. Only Changes are divergences: Earlier lists the commits of
// attempts the plan applier refused in part, which a re-run at the final
// snapshot index does not (and must not) reproduce.
type Report struct {
	EvalID string
	// Changes are the divergences between the completing commit and the
	// recomputed plan, placements first; empty when they are equal.
	Changes []Change
	// Earlier are the commits of the eval's earlier attempts (see
	// Record.Earlier): the applier refused part of each, the worker
	// planned again on newer state, and the final snapshot already holds
	// what they committed. The refused parts are not in the log, so these
	// attempts cannot be re-run.
	Earlier []Commit
}

// Empty reports whether the recomputed plan reproduces the recorded one.
func (d *Report) Empty() bool { return len(d.Changes) == 0 }

// Diff compares the decision rec recorded with plan, its re-run. A nil
// plan (or an undecided rec) makes every recorded item a change.
// Times of evals the worker creates (the blocked eval's CreateTime and
// ModifyTime come from the worker's clock) and Plan.Complete (not logged)
// are not compared.
func Diff(rec *Record, plan *scheduler.Plan) *Report {
	d := &Report{EvalID: rec.EvalID, Earlier: rec.Earlier}
	r := rec.Plan()
	if r == nil {
		r = &scheduler.Plan{EvalID: rec.EvalID}
	}
	if plan == nil {
		plan = &scheduler.Plan{EvalID: rec.EvalID}
	}
	add := func(cs ...Change) { d.Changes = append(d.Changes, cs...) }
	add(diffList(KindPlacement, r.Placements, plan.Placements, func(a events.Allocation) string { return a.ID }, placementSummary)...)
	add(diffList(KindStop, r.Stops, plan.Stops, updateID, updateSummary)...)
	add(diffList(KindUpdate, r.Updates, plan.Updates, updateID, updateSummary)...)
	add(diffList(KindDeployment, ptrList(r.Deployment), ptrList(plan.Deployment),
		func(d events.Deployment) string { return d.ID }, func(d events.Deployment) []Field {
			return []Field{{Name: "JobVersion", Recorded: fmt.Sprint(d.JobVersion)}, {Name: "Status", Recorded: d.Status}}
		})...)
	add(diffList(KindFollowUp, r.FollowUps, plan.FollowUps, func(e events.Evaluation) string { return e.ID }, evalSummary)...)
	add(diffBlocked(r, plan)...)
	add(diffMap(KindQueued, r.QueuedAllocations, plan.QueuedAllocations)...)
	add(diffMap(KindFailed, r.FailedTGAllocs, plan.FailedTGAllocs)...)
	if r.SnapshotIndex != plan.SnapshotIndex {
		add(Change{Kind: KindSnapshot, ID: rec.EvalID, Recorded: true, Recomputed: true,
			Fields: []Field{{Name: "SnapshotIndex", Recorded: fmt.Sprint(r.SnapshotIndex), Recomputed: fmt.Sprint(plan.SnapshotIndex)}}})
	}
	return d
}

// String renders the diff for people, one line per change.
func (d *Report) String() string {
	var b strings.Builder
	if d.Empty() {
		fmt.Fprintf(&b, "eval %s: the re-run reproduces the recorded plan\n", d.EvalID)
	} else {
		fmt.Fprintf(&b, "eval %s: %d divergences\n", d.EvalID, len(d.Changes))
	}
	for _, c := range d.Changes {
		b.WriteString("  " + c.String() + "\n")
	}
	for _, c := range d.Earlier {
		fmt.Fprintf(&b, "  earlier attempt committed at %d, the rest refused by the plan applier: %d placements, %d stops/updates, %d evals\n",
			c.Index, len(c.Placements), len(c.Updates), len(c.Evals))
	}
	return b.String()
}

// String renders the change on one line.
func (c Change) String() string {
	var b strings.Builder
	b.WriteString(string(c.Kind) + " " + c.ID)
	switch {
	case c.Recorded && !c.Recomputed:
		b.WriteString(": recorded, not recomputed")
	case !c.Recorded && c.Recomputed:
		b.WriteString(": recomputed, not recorded")
	default:
		b.WriteString(": differs")
	}
	for i, f := range c.Fields {
		sep := ", "
		if i == 0 {
			sep = " ("
		}
		switch {
		case c.Recorded && c.Recomputed:
			fmt.Fprintf(&b, "%s%s %s → %s", sep, f.Name, f.Recorded, f.Recomputed)
		case c.Recorded:
			fmt.Fprintf(&b, "%s%s %s", sep, f.Name, f.Recorded)
		default:
			fmt.Fprintf(&b, "%s%s %s", sep, f.Name, f.Recomputed)
		}
	}
	if len(c.Fields) > 0 {
		b.WriteString(")")
	}
	return b.String()
}

func updateID(u events.AllocDesiredUpdate) string { return u.ID }

func placementSummary(a events.Allocation) []Field {
	return []Field{{Name: "Name", Recorded: a.Name}, {Name: "NodeID", Recorded: a.NodeID},
		{Name: "Resources", Recorded: fmt.Sprintf("%+v", a.Resources)}}
}

func updateSummary(u events.AllocDesiredUpdate) []Field {
	var out []Field
	for _, f := range []Field{{Name: "DesiredStatus", Recorded: u.DesiredStatus},
		{Name: "DesiredDescription", Recorded: u.DesiredDescription}, {Name: "ClientStatus", Recorded: u.ClientStatus},
		{Name: "FollowupEvalID", Recorded: u.FollowupEvalID}} {
		if f.Recorded != "" {
			out = append(out, f)
		}
	}
	return out
}

func evalSummary(e events.Evaluation) []Field {
	return []Field{{Name: "TriggeredBy", Recorded: e.TriggeredBy}, {Name: "Status", Recorded: e.Status},
		{Name: "WaitUntil", Recorded: fmt.Sprint(e.WaitUntil)}}
}

func ptrList[T any](p *T) []T {
	if p == nil {
		return nil
	}
	return []T{*p}
}

// diffList pairs items by id: items one side lacks, then items whose
// fields differ, in the recorded order (recomputed-only items last), and
// an order change when the common items come in another order.
func diffList[T any](kind Kind, rec, re []T, id func(T) string, summary func(T) []Field) []Change {
	var out []Change
	recByID, reByID := map[string]T{}, map[string]T{}
	for _, x := range rec {
		recByID[id(x)] = x
	}
	for _, x := range re {
		reByID[id(x)] = x
	}
	var recOrder, reOrder []string
	for _, x := range rec {
		k := id(x)
		y, ok := reByID[k]
		if !ok {
			out = append(out, Change{Kind: kind, ID: k, Recorded: true, Fields: summary(x)})
			continue
		}
		recOrder = append(recOrder, k)
		if fs := fieldDiffs(x, y); len(fs) > 0 {
			out = append(out, Change{Kind: kind, ID: k, Recorded: true, Recomputed: true, Fields: fs})
		}
	}
	for _, y := range re {
		k := id(y)
		if _, ok := recByID[k]; !ok {
			fs := summary(y)
			for i := range fs {
				fs[i].Recorded, fs[i].Recomputed = "", fs[i].Recorded
			}
			out = append(out, Change{Kind: kind, ID: k, Recomputed: true, Fields: fs})
			continue
		}
		reOrder = append(reOrder, k)
	}
	if len(rec) != len(recByID) || len(re) != len(reByID) {
		out = append(out, Change{Kind: KindOrder, ID: string(kind), Recorded: true, Recomputed: true,
			Fields: []Field{{Name: "items", Recorded: fmt.Sprint(len(rec)), Recomputed: fmt.Sprint(len(re))},
				{Name: "distinct ids", Recorded: fmt.Sprint(len(recByID)), Recomputed: fmt.Sprint(len(reByID))}}})
	} else if !slices.Equal(recOrder, reOrder) {
		out = append(out, Change{Kind: KindOrder, ID: string(kind), Recorded: true, Recomputed: true,
			Fields: []Field{{Name: "ids", Recorded: strings.Join(recOrder, ","), Recomputed: strings.Join(reOrder, ",")}}})
	}
	return out
}

// diffBlocked compares the blocked eval each side asks for.
func diffBlocked(r, p *scheduler.Plan) []Change {
	if !r.CreateBlockedEval && !p.CreateBlockedEval {
		return nil
	}
	type blocked struct {
		ClassEligibility     map[string]bool
		EscapedComputedClass bool
	}
	x := blocked{r.ClassEligibility, r.EscapedComputedClass}
	y := blocked{p.ClassEligibility, p.EscapedComputedClass}
	c := Change{Kind: KindBlocked, ID: scheduler.DeriveID(r.EvalID, "blocked", 0),
		Recorded: r.CreateBlockedEval, Recomputed: p.CreateBlockedEval}
	if c.Recorded && c.Recomputed {
		if c.Fields = fieldDiffs(x, y); len(c.Fields) == 0 {
			return nil
		}
		return []Change{c}
	}
	side := x
	if c.Recomputed {
		side = y
	}
	f := Field{Name: "ClassEligibility", Recorded: show(reflect.ValueOf(side.ClassEligibility))}
	if c.Recomputed {
		f.Recorded, f.Recomputed = "", f.Recorded
	}
	c.Fields = []Field{f}
	return []Change{c}
}

// diffMap compares per-group values.
func diffMap[V any](kind Kind, rec, re map[string]V) []Change {
	keys := slices.Sorted(maps.Keys(rec))
	for k := range re {
		if _, ok := rec[k]; !ok {
			keys = append(keys, k)
		}
	}
	var out []Change
	for _, k := range keys {
		x, inRec := rec[k]
		y, inRe := re[k]
		if inRec && inRe {
			if !sameValue(reflect.ValueOf(x), reflect.ValueOf(y)) {
				out = append(out, Change{Kind: kind, ID: k, Recorded: true, Recomputed: true,
					Fields: []Field{{Name: string(kind), Recorded: show(reflect.ValueOf(x)), Recomputed: show(reflect.ValueOf(y))}}})
			}
			continue
		}
		c := Change{Kind: kind, ID: k, Recorded: inRec, Recomputed: inRe}
		if inRec {
			c.Fields = []Field{{Name: string(kind), Recorded: show(reflect.ValueOf(x))}}
		} else {
			c.Fields = []Field{{Name: string(kind), Recomputed: show(reflect.ValueOf(y))}}
		}
		out = append(out, c)
	}
	return out
}

// fieldDiffs compares two structs of the same type field by field (the
// read-model-only CreateIndex and ModifyIndex, and an eval's or an
// allocation's CreateTime and ModifyTime, excepted).
func fieldDiffs[T any](x, y T) []Field {
	vx, vy := reflect.ValueOf(x), reflect.ValueOf(y)
	t := vx.Type()
	var out []Field
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() || ignored(t, f.Name) {
			continue
		}
		if !sameValue(vx.Field(i), vy.Field(i)) {
			out = append(out, Field{Name: f.Name, Recorded: show(vx.Field(i)), Recomputed: show(vy.Field(i))})
		}
	}
	return out
}

func ignored(t reflect.Type, field string) bool {
	switch field {
	case "CreateIndex", "ModifyIndex":
		return true
	case "SigningKeyID": // stamped by the commit, not the scheduler (N5)
		return t == reflect.TypeFor[events.Allocation]()
	case "CreateTime", "ModifyTime": // an allocation's: stamped by the commit too
		return t == reflect.TypeFor[events.Evaluation]() || t == reflect.TypeFor[events.Allocation]()
	}
	return false
}

// sameValue compares two values by their canonical encoding, an empty map
// or slice equal to a nil one (the log omits empty ones).
func sameValue(x, y reflect.Value) bool {
	if empty(x) && empty(y) {
		return true
	}
	bx, errx := events.Marshal(x.Interface())
	by, erry := events.Marshal(y.Interface())
	if errx != nil || erry != nil {
		return reflect.DeepEqual(x.Interface(), y.Interface())
	}
	return bytes.Equal(bx, by)
}

func empty(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Map, reflect.Slice:
		return v.Len() == 0
	case reflect.Pointer, reflect.Interface:
		return v.IsNil()
	}
	return false
}

func show(v reflect.Value) string {
	if empty(v) {
		return "<none>"
	}
	if v.Kind() == reflect.Pointer {
		v = v.Elem()
	}
	if v.Kind() == reflect.Map {
		// Pointer values inside maps print as addresses: show them whole.
		parts := make([]string, 0, v.Len())
		for _, k := range v.MapKeys() {
			parts = append(parts, fmt.Sprintf("%v:%s", k.Interface(), show(v.MapIndex(k))))
		}
		slices.Sort(parts)
		return "map[" + strings.Join(parts, " ") + "]"
	}
	return fmt.Sprintf("%+v", v.Interface())
}
