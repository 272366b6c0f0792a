package chaos

import "github.com/anishathalye/porcupine"

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
//   - A key where a 409 names an index no answer explains (or names none)
//     keeps its unknown writes as they are: one of them may be what the
//     409 saw.
//
// It returns the history to check and how many unknown writes it found
// applied and left out.
func resolve(ops []porcupine.Operation) (out []porcupine.Operation, applied, dropped int) {
	type keyInfo struct {
		seen      map[string]uint64 // value → index an answer showed it at
		explained map[uint64]bool   // indexes some answer shows
		conflicts []uint64          // indexes jobs' 409s named
		opaque    bool              // a 409 named no index
	}
	keys := map[string]*keyInfo{}
	info := func(k string) *keyInfo {
		ki := keys[k]
		if ki == nil {
			ki = &keyInfo{seen: map[string]uint64{}, explained: map[uint64]bool{0: true}}
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
			ki.conflicts = append(ki.conflicts, o.Index)
		case o.Conflict:
			ki.opaque = true
		default: // an acknowledged write
			ki.explained[o.Index] = true
		}
	}
	for _, ki := range keys {
		for _, idx := range ki.conflicts {
			if !ki.explained[idx] {
				ki.opaque = true
			}
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
	return out, applied, dropped
}
