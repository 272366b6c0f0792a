package launcher

import (
	"fmt"
	"slices"
	"testing"

	lcmd "github.com/ordoplane/ordo/commands/launcher"
	"github.com/ordoplane/ordo/events"
)

// The batcher never puts two commands touching one request or instance
// in a group: the later one waits for the next, after the group before
// it applied; a step queued by an outcome goes in the group after.
func TestBatcherSplitsOnSharedKeys(t *testing.T) {
	var groups [][]string
	b := newBatcher(func(group []step) []error {
		var names []string
		for _, s := range group {
			names = append(names, s.name)
		}
		groups = append(groups, names)
		return make([]error, len(group))
	})
	ready := func(name, inst, req string) step {
		return step{name: name, about: req, cmd: lcmd.SetInstanceState{ID: inst, State: events.InstanceReady}}
	}
	var order []string
	done := func(name string) func(error) { return func(error) { order = append(order, name) } }
	b.add(ready("a1", "i1", "a"), done("a1"))
	b.add(ready("b1", "i2", "b"), done("b1"))
	b.add(ready("a2", "i3", "a"), done("a2")) // request a: a new group
	b.add(step{name: "remove-i3", cmd: lcmd.RemoveInstance{ID: "i3"}}, func(error) {
		order = append(order, "remove-i3")
		b.add(step{name: "pause", cmd: lcmd.Pause{Provider: "p", Paused: true}}, done("pause"))
	}) // instance i3: a new group
	b.add(step{name: "c", cmd: &lcmd.Accept{Provider: "p", RequestID: "c"}}, done("c"))
	b.flush()
	want := [][]string{{"a1", "b1"}, {"a2"}, {"remove-i3", "c"}, {"pause"}}
	if fmt.Sprint(groups) != fmt.Sprint(want) {
		t.Fatalf("groups %v; want %v", groups, want)
	}
	if wantOrder := []string{"a1", "b1", "a2", "remove-i3", "c", "pause"}; !slices.Equal(order, wantOrder) {
		t.Fatalf("outcomes in order %v; want %v", order, wantOrder)
	}
}
