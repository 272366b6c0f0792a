package scheduler

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

func walkNodes(n int) []*Node {
	out := make([]*Node, n)
	for i := range out {
		out[i] = &Node{ID: fmt.Sprintf("node-%05d", i)}
	}
	return out
}

// walkFor returns eval's walk over nodes, shuffled as newSched does.
func walkFor(nodes []*Node, eval string, all bool) walk {
	r := newRNG(eval)
	ns := slices.Clone(nodes)
	r.shuffle(ns)
	return newWalk(ns, r, all)
}

// groupsOf returns the walk's groups as sorted, joined node ids, in walk
// order.
func groupsOf(w walk) []string {
	var out []string
	from := 0
	for _, end := range w.ends {
		var ids []string
		for _, n := range w.nodes[from:end] {
			ids = append(ids, n.ID)
		}
		slices.Sort(ids)
		out = append(out, strings.Join(ids, ","))
		from = end
	}
	return out
}

// TestWalkGroupsAreSharedOrderIsNot: every eval's walk holds every node
// once, in the same groups, which evals take in different orders.
func TestWalkGroupsAreSharedOrderIsNot(t *testing.T) {
	nodes := walkNodes(1000)
	a, b := walkFor(nodes, "eval-a", false), walkFor(nodes, "eval-b", false)
	for _, w := range []walk{a, b} {
		seen := map[string]bool{}
		for _, n := range w.nodes {
			seen[n.ID] = true
		}
		if len(w.nodes) != len(nodes) || len(seen) != len(nodes) {
			t.Fatalf("walk holds %d nodes, %d distinct; want %d", len(w.nodes), len(seen), len(nodes))
		}
		if len(w.ends) < 1000/walkGroup-2 || w.ends[len(w.ends)-1] != len(nodes) {
			t.Fatalf("walk has %d groups ending at %d", len(w.ends), w.ends[len(w.ends)-1])
		}
	}
	ga, gb := groupsOf(a), groupsOf(b)
	if slices.Equal(ga, gb) {
		t.Fatal("two evals take the groups in the same order")
	}
	sa, sb := slices.Clone(ga), slices.Clone(gb)
	slices.Sort(sa)
	slices.Sort(sb)
	if !slices.Equal(sa, sb) {
		t.Fatal("two evals group the nodes differently")
	}
}

// TestWalkSmallClusterIsOneGroup: below two groups' worth of nodes the
// walk is the shuffled order, all of it open at once.
func TestWalkSmallClusterIsOneGroup(t *testing.T) {
	nodes := walkNodes(2*walkGroup - 1)
	r := newRNG("eval-a")
	ns := slices.Clone(nodes)
	r.shuffle(ns)
	w := newWalk(ns, r, false)
	if len(w.ends) != 1 || w.region != len(nodes) || !slices.Equal(w.nodes, ns) {
		t.Fatalf("walk of %d nodes: %d groups, region %d", len(nodes), len(w.ends), w.region)
	}
}

// TestWalkRegion: a placement visits the region from where the last one
// stopped, wrapping around; once it has seen all of it, the next group
// joins; with all, every node is open from the start.
func TestWalkRegion(t *testing.T) {
	nodes := walkNodes(200)
	w := walkFor(nodes, "eval-a", false)
	first := w.ends[0]
	if w.region != first {
		t.Fatalf("region %d, want the first group's %d", w.region, first)
	}
	// Two placements that each visit 5 nodes go on from each other.
	var got []*Node
	for range 2 {
		w.begin()
		for range 5 {
			n, _ := w.next()
			got = append(got, n)
		}
	}
	if !slices.Equal(got, w.nodes[:10]) {
		t.Fatal("placements did not visit the walk in order")
	}
	// One that finds nothing in the region visits all of it, wrapping
	// round to where it began, then enters the next group.
	w.begin()
	var visited []*Node
	for range first {
		n, _ := w.next()
		visited = append(visited, n)
	}
	if want := append(slices.Clone(w.nodes[10:first]), w.nodes[:10]...); !slices.Equal(visited, want) {
		t.Fatal("a placement did not go round the region from where the last stopped")
	}
	if n, _ := w.next(); n != w.nodes[first] || w.region != w.ends[1] {
		t.Fatalf("after the region: node %v, region %d; want the next group's first, region %d", n, w.region, w.ends[1])
	}
	// Every node is visited once, then the walk ends.
	w.begin()
	count := 0
	for {
		if _, ok := w.next(); !ok {
			break
		}
		count++
	}
	if count != len(nodes) || w.region != len(nodes) {
		t.Fatalf("visited %d of %d nodes, region %d", count, len(nodes), w.region)
	}
	if all := walkFor(nodes, "eval-a", true); all.region != len(nodes) {
		t.Fatalf("spread's region %d, want all %d", all.region, len(nodes))
	}
	empty := newWalk(nil, newRNG("x"), false)
	if _, ok := empty.next(); ok {
		t.Fatal("a walk of no nodes returned one")
	}
}
