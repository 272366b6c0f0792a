package jobs

import (
	"fmt"
	"slices"
	"strings"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/ordoplane/ordo/events"
)

// groupCounts are a summary row's counts per task group, sorted by group
// name: a slice, not a map, since a client update clones its job's
// summary (a map's clone cost a rebuild 10% of what it allocated). It
// encodes as the map it replaced, keys in order, byte for byte.
type groupCounts []groupCount

// groupCount is one task group's counts.
type groupCount struct {
	Name string
	TaskGroupSummary
}

// find returns where group name is, or where it would go, and whether it
// is there.
func (gs groupCounts) find(name string) (int, bool) {
	return slices.BinarySearchFunc(gs, name, func(g groupCount, n string) int { return strings.Compare(g.Name, n) })
}

// get returns the counts of group name and whether it has any.
func (gs groupCounts) get(name string) (TaskGroupSummary, bool) {
	if i, ok := gs.find(name); ok {
		return gs[i].TaskGroupSummary, true
	}
	return TaskGroupSummary{}, false
}

// set makes c the counts of group name.
func (gs *groupCounts) set(name string, c TaskGroupSummary) {
	if k := len(*gs); k > 0 && (*gs)[k-1].Name < name {
		*gs = append(*gs, groupCount{name, c}) // after the last: a decode's groups come in key order
		return
	}
	i, ok := gs.find(name)
	if ok {
		(*gs)[i].TaskGroupSummary = c
		return
	}
	*gs = slices.Insert(*gs, i, groupCount{Name: name, TaskGroupSummary: c})
}

// asMap returns the counts by group name (nil for none).
func (gs groupCounts) asMap() map[string]TaskGroupSummary {
	if len(gs) == 0 {
		return nil
	}
	m := make(map[string]TaskGroupSummary, len(gs))
	for _, g := range gs {
		m[g.Name] = g.TaskGroupSummary
	}
	return m
}

// EncodeMsgpack writes the counts as a map in key order.
func (gs groupCounts) EncodeMsgpack(enc *msgpack.Encoder) error {
	w := events.WriterTo(enc)
	gs.EncodeFields(&w)
	return w.Err()
}

// EncodeFields implements events.FieldEncoder: a map in key order, nil
// when there are none.
func (gs groupCounts) EncodeFields(w *events.FieldWriter) {
	if gs == nil {
		w.Nil()
		return
	}
	w.Map(len(gs))
	for i := range gs {
		w.Key(gs[i].Name)
		gs[i].TaskGroupSummary.EncodeFields(w)
	}
}

// DecodeMsgpack reads a map of counts by group name.
func (gs *groupCounts) DecodeMsgpack(dec *msgpack.Decoder) error {
	n, err := dec.DecodeMapLen()
	if err != nil {
		return err
	}
	if n < 0 {
		*gs = nil
		return nil
	}
	out := make(groupCounts, 0, n)
	for range n {
		var name string
		var c TaskGroupSummary
		if name, err = dec.DecodeString(); err != nil {
			return err
		}
		if err := dec.Decode(&c); err != nil {
			return fmt.Errorf("group %q: %w", name, err)
		}
		out.set(name, c) // a key given twice keeps its last counts, as in a map
	}
	*gs = out
	return nil
}
