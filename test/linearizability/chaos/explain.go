package chaos

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"
)

// Explain describes where a history that is not linearizable gets stuck:
// for each register whose operations porcupine could not all linearize,
// the end of the longest linearization it found, the state it left, and
// the first operations that could not follow. info is Check's.
func Explain(history []porcupine.Operation, info porcupine.LinearizationInfo) string {
	var b strings.Builder
	parts := partitionByKey(history)
	partials := info.PartialLinearizations()
	for p, ops := range parts {
		if p >= len(partials) {
			break
		}
		var best []int
		for _, l := range partials[p] {
			if len(l) > len(best) {
				best = l
			}
		}
		if len(best) == len(ops) {
			continue
		}
		key := ops[0].Input.(Input).Key
		fmt.Fprintf(&b, "%s: %d of %d operations linearized; the last of them:\n", key, len(best), len(ops))
		st := state{Known: true}
		done := make(map[int]bool, len(best))
		for i, id := range best {
			_, st = step(st, ops[id].Input.(Input), ops[id].Output.(Output))
			done[id] = true
			if i >= len(best)-6 {
				fmt.Fprintf(&b, "  %s\n", describeOp(ops[id]))
			}
		}
		fmt.Fprintf(&b, "  state then: %s\n", Model().DescribeState(st))
		var rest []porcupine.Operation
		for id, op := range ops {
			if !done[id] {
				rest = append(rest, op)
			}
		}
		sort.Slice(rest, func(i, j int) bool { return rest[i].Return < rest[j].Return })
		fmt.Fprintf(&b, "  none of these can come next (earliest returns first):\n")
		for i, op := range rest {
			if i == 6 {
				break
			}
			fmt.Fprintf(&b, "  %s\n", describeOp(op))
		}
	}
	return b.String()
}

// describeOp renders an operation with its client, server and times.
func describeOp(op porcupine.Operation) string {
	ms := func(ns int64) string { return time.Duration(ns).Round(time.Millisecond).String() }
	ret := ms(op.Return)
	if op.Output.(Output).Unknown {
		ret = "end"
	}
	return fmt.Sprintf("[%s–%s] client %d via %v: %s", ms(op.Call), ret, op.ClientId, op.Metadata,
		describe(op.Input.(Input), op.Output.(Output)))
}
