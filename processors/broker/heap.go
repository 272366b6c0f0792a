package broker

import "github.com/ordoplane/ordo/events"

// item is an eval in a queue; seq orders evals of equal priority by arrival.
type item struct {
	eval *events.Evaluation
	seq  uint64
}

// before orders higher priority first, then earlier arrival.
func (i *item) before(j *item) bool {
	if i.eval.Priority != j.eval.Priority {
		return i.eval.Priority > j.eval.Priority
	}
	return i.seq < j.seq
}

// evalHeap is a priority queue of evals (container/heap).
type evalHeap []*item

func (h evalHeap) Len() int           { return len(h) }
func (h evalHeap) Less(i, j int) bool { return h[i].before(h[j]) }
func (h evalHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *evalHeap) Push(x any)        { *h = append(*h, x.(*item)) }
func (h *evalHeap) Pop() any {
	old := *h
	it := old[len(old)-1]
	*h = old[:len(old)-1]
	return it
}

func (h evalHeap) contains(id string) bool {
	for _, it := range h {
		if it.eval.ID == id {
			return true
		}
	}
	return false
}
