package scheduler

import "hash/fnv"

// walkGroup is about how many nodes make one group of the walk.
const walkGroup = 32

// walk is the order in which one eval's placements visit the candidate
// nodes, and how far they may go.
//
// Workers compute plans concurrently on snapshots that lack each other's
// placements, and the plan applier refuses a node's part of a plan when
// it and a plan committed meanwhile overfill the node. Plans that each
// walked the whole cluster in a random order and bin packed chose the
// nearly full nodes that every concurrent plan chose too: in the C1M run
// (2 workers, 5,000 nodes, 100 jobs × 1,000) half the plans were refused
// in part, on nodes 80–100% full. So a plan keeps to a few groups of
// nodes, and concurrent plans start in different ones:
//
//   - Nodes fall into groups of about walkGroup by a hash of their id,
//     the same groups for every eval. The walk takes the groups in an
//     order drawn from the eval's seed, each group's nodes in the eval's
//     shuffled order.
//   - Each placement visits nodes from where the last one stopped,
//     wrapping around within the region: the groups the plan has entered.
//     With binpack the region is the first group at first, and the next
//     group joins only when a placement went round the whole region
//     without finding enough nodes that fit; so a plan fills the groups
//     it is in and leaves the rest to concurrent plans. With spread the
//     region is every node from the start, as in Nomad's iterator:
//     spreading wants every node, and plans that prefer the emptiest
//     nodes seldom overfill one.
//
// A cluster of fewer than 2×walkGroup nodes is one group: there the walk
// is Nomad's, shuffled nodes visited from where the last placement
// stopped.
type walk struct {
	nodes []*Node
	// ends[i] is where the walk's group i ends in nodes.
	ends []int
	// region is how many of nodes the placements may visit (the first
	// groups entered of them), entered how many groups.
	region, entered int
	// pos is the next node to visit; seen counts one placement's visits.
	pos, seen int
}

// newWalk orders nodes (shuffled by r already) into the eval's walk; all
// opens the whole walk at once (spread).
func newWalk(nodes []*Node, r *rng, all bool) walk {
	w := walk{nodes: nodes, ends: []int{len(nodes)}}
	if groups := len(nodes) / walkGroup; groups > 1 {
		w.nodes, w.ends = grouped(nodes, groups, r)
	}
	w.entered = 1
	if all {
		w.entered = len(w.ends)
	}
	w.region = w.ends[w.entered-1]
	return w
}

// grouped returns nodes in groups (by a hash of their id into groups)
// taken in an order drawn from r, and where each group ends; a group
// keeps its nodes' order.
func grouped(nodes []*Node, groups int, r *rng) ([]*Node, []int) {
	rank := make([]int, groups) // group → its place in the walk
	for i := range rank {
		rank[i] = i
	}
	for i := groups - 1; i > 0; i-- {
		j := r.intn(i + 1)
		rank[i], rank[j] = rank[j], rank[i]
	}
	of := make([]int, len(nodes)) // node → its group's place
	start := make([]int, groups+1)
	for i, n := range nodes {
		h := fnv.New32a()
		h.Write([]byte(n.ID))
		of[i] = rank[h.Sum32()%uint32(groups)]
		start[of[i]+1]++
	}
	ends := make([]int, 0, groups)
	for g := range groups {
		start[g+1] += start[g]
		if start[g+1] > start[g] {
			ends = append(ends, start[g+1])
		}
	}
	out := make([]*Node, len(nodes))
	for i, n := range nodes {
		out[start[of[i]]] = n
		start[of[i]]++
	}
	return out, ends
}

// begin starts one placement's visit.
func (w *walk) begin() { w.seen = 0 }

// next returns the next node to visit, taking the next group into the
// region when this placement has visited all of it; false when it has
// visited every node.
func (w *walk) next() (*Node, bool) {
	if w.seen == w.region {
		if w.entered == len(w.ends) {
			return nil, false
		}
		w.pos = w.region
		w.entered++
		w.region = w.ends[w.entered-1]
	}
	n := w.nodes[w.pos]
	w.seen++
	if w.pos++; w.pos == w.region {
		w.pos = 0
	}
	return n, true
}
