package jobplan

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"strconv"

	"github.com/ordoplane/ordo/events"
)

// The diff types, as Nomad names them.
const (
	DiffAdded   = "Added"
	DiffDeleted = "Deleted"
	DiffEdited  = "Edited"
	DiffNone    = "None"
)

// FieldDiff is Nomad's FieldDiff: one scalar that changed.
type FieldDiff struct {
	Type        string
	Name        string
	Old, New    string
	Annotations []string
}

// ObjectDiff is Nomad's ObjectDiff: a block (Update, Meta, Config, …)
// whose fields changed; nested blocks are flattened into dotted field
// names (args[0], ports.http).
type ObjectDiff struct {
	Type    string
	Name    string
	Fields  []*FieldDiff
	Objects []*ObjectDiff
}

// TaskDiff is Nomad's TaskDiff.
type TaskDiff struct {
	Type        string
	Name        string
	Fields      []*FieldDiff
	Objects     []*ObjectDiff
	Annotations []string
}

// TaskGroupDiff is Nomad's TaskGroupDiff; Updates counts what the plan
// does to the group's allocations, keyed as Nomad keys them.
type TaskGroupDiff struct {
	Type    string
	Name    string
	Fields  []*FieldDiff
	Objects []*ObjectDiff
	Tasks   []*TaskDiff
	Updates map[string]uint64
}

// JobDiff is Nomad's JobDiff.
type JobDiff struct {
	Type       string
	ID         string
	Fields     []*FieldDiff
	Objects    []*ObjectDiff
	TaskGroups []*TaskGroupDiff
}

// Diff returns the diff of newJob against oldJob (nil: a new job), with
// each group's Updates taken from updates. Server-set fields (Version,
// SubmitTime) are not compared; fields that did not change are left out.
func Diff(oldJob, newJob *events.Job, updates map[string]*DesiredUpdates) *JobDiff {
	d := &JobDiff{ID: newJob.ID, Type: DiffEdited}
	var oldTGs []events.TaskGroup
	if oldJob == nil {
		d.Type = DiffAdded
	} else {
		oldTGs = oldJob.TaskGroups
	}
	d.Fields, d.Objects = diffValues(tree(oldJob, "TaskGroups", "Version", "SubmitTime"),
		tree(newJob, "TaskGroups", "Version", "SubmitTime"))
	changed := len(d.Fields)+len(d.Objects) > 0
	for _, name := range unionNames(oldTGs, newJob.TaskGroups, func(g events.TaskGroup) string { return g.Name }) {
		og, ng := findGroup(oldTGs, name), findGroup(newJob.TaskGroups, name)
		gd := diffGroup(name, og, ng)
		if u := updates[name]; u != nil {
			gd.Updates = u.keyed()
		}
		if gd.Type != DiffNone {
			changed = true
		}
		d.TaskGroups = append(d.TaskGroups, gd)
	}
	if oldJob != nil && !changed {
		d.Type = DiffNone
	}
	return d
}

func (u *DesiredUpdates) keyed() map[string]uint64 {
	m := map[string]uint64{}
	for k, n := range map[string]uint64{"ignore": u.Ignore, "create": u.Place, "migrate": u.Migrate,
		"destroy": u.Stop, "in-place update": u.InPlaceUpdate, "create/destroy update": u.DestructiveUpdate,
		"canary": u.Canary} {
		if n > 0 {
			m[k] = n
		}
	}
	return m
}

func findGroup(gs []events.TaskGroup, name string) *events.TaskGroup {
	for i := range gs {
		if gs[i].Name == name {
			return &gs[i]
		}
	}
	return nil
}

func findTask(ts []events.Task, name string) *events.Task {
	for i := range ts {
		if ts[i].Name == name {
			return &ts[i]
		}
	}
	return nil
}

// unionNames returns the names in old then those only in new, each once.
func unionNames[T any](old, new []T, name func(T) string) []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range [][]T{old, new} {
		for _, x := range s {
			if n := name(x); !seen[n] {
				seen[n] = true
				out = append(out, n)
			}
		}
	}
	return out
}

// kind returns the diff type of an entity that is old (nil: absent) and
// new, given whether anything under it changed.
func kind(isOld, isNew, changed bool) string {
	switch {
	case !isOld:
		return DiffAdded
	case !isNew:
		return DiffDeleted
	case changed:
		return DiffEdited
	}
	return DiffNone
}

func diffGroup(name string, og, ng *events.TaskGroup) *TaskGroupDiff {
	gd := &TaskGroupDiff{Name: name}
	gd.Fields, gd.Objects = diffValues(tree(og, "Tasks", "Name"), tree(ng, "Tasks", "Name"))
	changed := len(gd.Fields)+len(gd.Objects) > 0
	var ots, nts []events.Task
	if og != nil {
		ots = og.Tasks
	}
	if ng != nil {
		nts = ng.Tasks
	}
	for _, tn := range unionNames(ots, nts, func(t events.Task) string { return t.Name }) {
		ot, nt := findTask(ots, tn), findTask(nts, tn)
		td := &TaskDiff{Name: tn}
		td.Fields, td.Objects = diffValues(tree(ot, "Name"), tree(nt, "Name"))
		td.Type = kind(ot != nil, nt != nil, len(td.Fields)+len(td.Objects) > 0)
		if td.Type != DiffNone {
			changed = true
		}
		gd.Tasks = append(gd.Tasks, td)
	}
	gd.Type = kind(og != nil, ng != nil, changed)
	return gd
}

// tree returns v's JSON form as a map without the named keys; nil for a
// nil v. Numbers stay exact (json.Number).
func tree[T any](v *T, drop ...string) map[string]any {
	if v == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var m map[string]any
	if dec.Decode(&m) != nil {
		return nil
	}
	for _, k := range drop {
		delete(m, k)
	}
	return m
}

// diffValues compares two JSON trees: scalars at the top level are
// fields, composite values (blocks, lists, maps) are objects whose
// leaves are flattened under dotted names.
func diffValues(old, new map[string]any) ([]*FieldDiff, []*ObjectDiff) {
	var fields []*FieldDiff
	var objects []*ObjectDiff
	keys := slices.Sorted(maps.Keys(old))
	for k := range new {
		if _, ok := old[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		ov, nv := old[k], new[k]
		if isComposite(ov) || isComposite(nv) {
			of, nf := map[string]string{}, map[string]string{}
			flatten("", ov, of)
			flatten("", nv, nf)
			if fs := diffFlat(of, nf); len(fs) > 0 {
				objects = append(objects, &ObjectDiff{Type: kind(len(of) > 0, len(nf) > 0, true), Name: k, Fields: fs})
			}
			continue
		}
		of, nf := map[string]string{}, map[string]string{}
		flatten(k, ov, of)
		flatten(k, nv, nf)
		fields = append(fields, diffFlat(of, nf)...)
	}
	return fields, objects
}

func isComposite(v any) bool {
	switch v.(type) {
	case map[string]any, []any:
		return true
	}
	return false
}

// flatten writes v's scalar leaves into out under prefix: maps as
// prefix.key, lists as prefix[i]; nulls and empty strings are absent.
func flatten(prefix string, v any, out map[string]string) {
	join := func(k string) string {
		if prefix == "" {
			return k
		}
		return prefix + "." + k
	}
	switch v := v.(type) {
	case nil:
	case map[string]any:
		for k, x := range v {
			flatten(join(k), x, out)
		}
	case []any:
		for i, x := range v {
			flatten(prefix+"["+strconv.Itoa(i)+"]", x, out)
		}
	case string:
		if v != "" {
			out[prefix] = v
		}
	case json.Number:
		out[prefix] = v.String()
	case bool:
		out[prefix] = strconv.FormatBool(v)
	}
}

// diffFlat returns the fields that differ between two flattened trees,
// sorted by name.
func diffFlat(old, new map[string]string) []*FieldDiff {
	var out []*FieldDiff
	names := slices.Sorted(maps.Keys(old))
	for k := range new {
		if _, ok := old[k]; !ok {
			names = append(names, k)
		}
	}
	slices.Sort(names)
	for _, n := range names {
		ov, inOld := old[n]
		nv, inNew := new[n]
		if inOld && inNew && ov == nv {
			continue
		}
		out = append(out, &FieldDiff{Type: kind(inOld, inNew, true), Name: n, Old: ov, New: nv})
	}
	return out
}
