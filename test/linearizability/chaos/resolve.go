package chaos

import (
	"fmt"

	"github.com/anishathalye/porcupine"
)

// resolve prepares a history for the checker by settling what the answers
// tell about the writes whose outcome is unknown. Left as they are, such
// writes can be ordered anywhere after their call, and porcupine's search
// grows with every subset of them open at once: a long run's history would
// not be decided in hours.
//
// Every write writes a value no other write writes, so:
//
//   - A write whose value some answer shows (a read, a variable's 409 with
//     the current variable) took effect, at the index that answer names:
//     it becomes a write answered that index, still returning at the end of
//     the history (when it was acknowledged is unknown).
//   - A write whose value no answer shows is left out. Had it taken
//     effect, nothing observed it: a read or a 409 during its reign would
//     have shown its value, or (a job's 409) its index, which no other
//     write has; after a later write replaced it, the register is the same
//     with or without it. So the history with it is linearizable if and
//     only if the history without it is.
//   - A job's 409 that names an index no answer explains saw a write
//     whose value nothing showed: one of the unknown writes called before
//     the 409 returned took effect at that index. It is checked as a
//     write at that index of a value nobody reads, called when the first
//     of those writes was (the others are left out as above).
//   - A key where a 409 names no index, or an index no unknown write can
//     explain, keeps its unknown writes as they are.
//
// It returns the history to check and how many unknown writes it found
// applied (the unseen writes a 409 saw among them) and left out.
func resolve(ops []porcupine.Operation) (out []porcupine.Operation, applied, dropped int) {
	type keyInfo struct {
		seen      map[string]uint64 // value → index an answer showed it at
		explained map[uint64]bool   // indexes some answer shows
		conflicts map[uint64]int64  // index a job's 409 named → its earliest return
		opaque    bool              // a 409 named no index
	}
	keys := map[string]*keyInfo{}
	info := func(k string) *keyInfo {
		ki := keys[k]
		if ki == nil {
			ki = &keyInfo{seen: map[string]uint64{}, explained: map[uint64]bool{0: true}, conflicts: map[uint64]int64{}}
			keys[k] = ki
		}
		return ki
	}
	for _, op := range ops {
		in, o := op.Input.(Input), op.Output.(Output)
		ki := info(in.Key)
		switch {
		case o.Unknown:
		case o.Conflict && o.Current, !o.Conflict && in.Kind == OpRead:
			if _, ok := ki.seen[o.Value]; !ok {
				ki.seen[o.Value] = o.Index
			}
			ki.explained[o.Index] = true
		case o.Conflict && o.CurrentIndex:
			if r, ok := ki.conflicts[o.Index]; !ok || op.Return < r {
				ki.conflicts[o.Index] = op.Return
			}
		case o.Conflict:
			ki.opaque = true
		default: // an acknowledged write
			ki.explained[o.Index] = true
		}
	}
	// The writes 409s saw and nothing else showed.
	var phantoms []porcupine.Operation
	for key, ki := range keys {
		if ki.opaque {
			continue
		}
		for idx, ret := range ki.conflicts {
			if ki.explained[idx] {
				continue
			}
			first := -1
			for i, op := range ops {
				in, o := op.Input.(Input), op.Output.(Output)
				if o.Unknown && in.Key == key && op.Call < ret {
					if _, seen := ki.seen[in.Value]; !seen && (first < 0 || op.Call < ops[first].Call) {
						first = i
					}
				}
			}
			if first < 0 {
				ki.opaque = true // nothing can have written it: left to the checker
				break
			}
			ph := ops[first]
			ph.Input = Input{Key: key, Kind: OpWrite, Value: fmt.Sprintf("(a write nothing showed, at %d)", idx)}
			ph.Output = Output{Index: idx}
			phantoms = append(phantoms, ph)
		}
	}
	out = make([]porcupine.Operation, 0, len(ops))
	for _, op := range ops {
		in, o := op.Input.(Input), op.Output.(Output)
		if !o.Unknown {
			out = append(out, op)
			continue
		}
		ki := keys[in.Key]
		if idx, ok := ki.seen[in.Value]; ok {
			op.Output = Output{Index: idx}
			out = append(out, op)
			applied++
			continue
		}
		if ki.opaque {
			out = append(out, op)
			continue
		}
		dropped++
	}
	for _, ph := range phantoms {
		if !keys[ph.Input.(Input).Key].opaque {
			out = append(out, ph)
			applied++
			dropped--
		}
	}
	return out, applied, dropped
}
