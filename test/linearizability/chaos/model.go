package chaos

import (
	"fmt"
	"sort"

	"github.com/anishathalye/porcupine"
)

// OpKind is what an operation does to its register.
type OpKind uint8

// The operations on a register.
const (
	// OpRead reads the value and its modify index.
	OpRead OpKind = iota
	// OpWrite writes a value unconditionally and answers its new index.
	OpWrite
	// OpCAS writes a value only if the modify index is Input.Expect (0:
	// only if absent); it answers the new index or a conflict.
	OpCAS
)

func (k OpKind) String() string {
	switch k {
	case OpRead:
		return "read"
	case OpWrite:
		return "write"
	case OpCAS:
		return "cas"
	}
	return fmt.Sprintf("op%d", k)
}

// Input is an operation as a client called it.
type Input struct {
	// Key names the register: "var:<path>" or "job:<id>".
	Key  string
	Kind OpKind
	// Value is what a write or cas writes; every write of a run writes a
	// value no other write writes, so a read tells which write it saw.
	Value string
	// Expect is a cas's expected modify index.
	Expect uint64
}

// Output is what the operation was answered.
type Output struct {
	// Unknown: no answer that tells whether a write took effect (a
	// timeout, a lost connection, a 5xx). Its Return is the end of the
	// history and the model accepts it whether or not it took effect.
	Unknown bool
	// Conflict: a cas refused (409).
	Conflict bool
	// Current: the conflict carries the register's current value and
	// index (a variable's 409 answers the current variable). CurrentIndex:
	// it carries the current index only (a job's 409 names it).
	Current, CurrentIndex bool
	// Value is the value read (read), or the current value (Conflict with
	// Current); "" is an absent register.
	Value string
	// Index is the modify index read (read), the new index of a write or
	// a successful cas, or the current index (Conflict with Current or
	// CurrentIndex); 0 is an absent register.
	Index uint64
}

// state is a register's state in the model: its value and modify index.
// After a write whose outcome is unknown took effect, the index is not
// known (Known false) until a read or a conflict shows it; Index then
// holds the index before that write, a lower bound.
type state struct {
	Value string
	Index uint64
	Known bool
}

// step is the sequential specification of a register with a modify index.
func step(st state, in Input, out Output) (bool, state) {
	switch in.Kind {
	case OpRead:
		return observe(st, out.Value, out.Index)
	case OpWrite:
		if out.Unknown {
			return true, state{Value: in.Value, Index: st.Index}
		}
		if out.Index <= st.Index {
			return false, st
		}
		return true, state{Value: in.Value, Index: out.Index, Known: true}
	case OpCAS:
		switch {
		case out.Unknown:
			// Had it taken effect, its index would follow the one it
			// expected; if the index is unknown, the cas expected one it
			// cannot have seen (a read that saw it would have made it
			// known), so it would have failed.
			if st.Known && st.Index == in.Expect {
				return true, state{Value: in.Value, Index: st.Index}
			}
			return true, st
		case out.Conflict && out.Current:
			if out.Index == in.Expect {
				return false, st
			}
			return observe(st, out.Value, out.Index)
		case out.Conflict && out.CurrentIndex:
			if out.Index == in.Expect {
				return false, st
			}
			return observe(st, st.Value, out.Index)
		case out.Conflict:
			return !st.Known || st.Index != in.Expect, st
		default:
			if !st.Known || st.Index != in.Expect || out.Index <= st.Index {
				return false, st
			}
			return true, state{Value: in.Value, Index: out.Index, Known: true}
		}
	}
	return false, st
}

// observe steps a read of (value, index): the state must be that value at
// that index, or that value at an index not known yet and above the bound.
func observe(st state, value string, index uint64) (bool, state) {
	if value != st.Value {
		return false, st
	}
	if st.Known {
		return index == st.Index, st
	}
	if index <= st.Index {
		return false, st
	}
	return true, state{Value: value, Index: index, Known: true}
}

// Model is the porcupine model of the registers a run uses: each key is a
// register with a modify index (see step), checked on its own partition.
func Model() porcupine.Model {
	return porcupine.Model{
		Partition: partitionByKey,
		Init:      func() any { return state{Known: true} },
		Step: func(s, in, out any) (bool, any) {
			return step(s.(state), in.(Input), out.(Output))
		},
		DescribeOperation: func(in, out any) string { return describe(in.(Input), out.(Output)) },
		DescribeOperationMetadata: func(m any) string {
			if m == nil {
				return ""
			}
			return fmt.Sprintf("via %v", m)
		},
		DescribeState: func(s any) string {
			st := s.(state)
			if st.Known {
				return fmt.Sprintf("%q@%d", st.Value, st.Index)
			}
			return fmt.Sprintf("%q@>%d", st.Value, st.Index)
		},
	}
}

// partitionByKey splits a history into one history per register.
func partitionByKey(history []porcupine.Operation) [][]porcupine.Operation {
	byKey := map[string][]porcupine.Operation{}
	for _, op := range history {
		k := op.Input.(Input).Key
		byKey[k] = append(byKey[k], op)
	}
	keys := make([]string, 0, len(byKey))
	for k := range byKey {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([][]porcupine.Operation, 0, len(keys))
	for _, k := range keys {
		out = append(out, byKey[k])
	}
	return out
}

// describe renders an operation for the visualization and failure reports.
func describe(in Input, out Output) string {
	var call string
	switch in.Kind {
	case OpRead:
		call = fmt.Sprintf("%s read", in.Key)
	case OpWrite:
		call = fmt.Sprintf("%s write(%q)", in.Key, in.Value)
	case OpCAS:
		call = fmt.Sprintf("%s cas(@%d, %q)", in.Key, in.Expect, in.Value)
	}
	switch {
	case out.Unknown:
		return call + " → ?"
	case out.Conflict && out.Current:
		return fmt.Sprintf("%s → conflict, current %q@%d", call, out.Value, out.Index)
	case out.Conflict && out.CurrentIndex:
		return fmt.Sprintf("%s → conflict, current @%d", call, out.Index)
	case out.Conflict:
		return call + " → conflict"
	case in.Kind == OpRead:
		return fmt.Sprintf("%s → %q@%d", call, out.Value, out.Index)
	}
	return fmt.Sprintf("%s → @%d", call, out.Index)
}
