package events

import (
	"github.com/vmihailenco/msgpack/v5"
)

var _ msgpack.CustomDecoder = (*AllocClientUpdate)(nil)

// plainClientUpdate is AllocClientUpdate without its decoder.
type plainClientUpdate AllocClientUpdate

// DecodeMsgpack implements msgpack.CustomDecoder: a client's update of an
// allocation, the most frequent event of a scheduling history, decodes
// from bytes as an allocation does (Allocation.DecodeMsgpack), else by
// reflection. FuzzClientUpdateDecoder holds the two to the same result.
func (u *AllocClientUpdate) DecodeMsgpack(dec *msgpack.Decoder) error {
	return decodeFastOr(dec, u.decodeFast, (*plainClientUpdate)(u))
}

// decodeFast decodes the update at d into u, as reflection does.
func (u *AllocClientUpdate) decodeFast(d *fastReader) bool {
	n, ok := d.mapLen()
	if !ok {
		return false
	}
	strs := stringSpans{src: d.b}
	for range n {
		key, ok := d.str()
		if !ok {
			return false
		}
		switch string(key) {
		case "id":
			ok = d.strTo(&strs, &u.ID)
		case "cs":
			ok = d.strTo(&strs, &u.ClientStatus)
		case "cd":
			ok = d.strTo(&strs, &u.ClientDescription)
		case "ts":
			ok = d.taskStates(&u.TaskStates, &strs)
		case "depst":
			ok = d.reflected(&u.DeploymentStatus)
		default:
			ok = d.skip()
		}
		if !ok {
			return false
		}
	}
	strs.set()
	return true
}

// taskStates decodes a map of task states into *m as reflection does: a
// nil empties it, entries are added to a map already there.
func (d *fastReader) taskStates(m *map[string]*TaskState, strs *stringSpans) bool {
	if d.nil() {
		*m = nil
		return true
	}
	n, ok := d.mapLen()
	if !ok || n > len(d.b)-d.i {
		return false
	}
	if *m == nil {
		*m = make(map[string]*TaskState, n)
	}
	for range n {
		k, ok := d.str()
		if !ok {
			return false
		}
		var ts *TaskState
		if !d.nil() {
			ts = new(TaskState)
			if !ts.decodeFast(d, strs) {
				return false
			}
		}
		(*m)[string(k)] = ts
	}
	return true
}

// decodeFast decodes the task state at d (a map) into s, as reflection
// does.
func (s *TaskState) decodeFast(d *fastReader, strs *stringSpans) bool {
	n, ok := d.mapLen()
	if !ok {
		return false
	}
	for range n {
		key, ok := d.str()
		if !ok {
			return false
		}
		var v int64
		switch string(key) {
		case "st":
			ok = d.strTo(strs, &s.State)
		case "f":
			ok = d.boolTo(&s.Failed)
		case "r":
			ok = d.intTo(&v)
			s.Restarts = int(v)
		case "sa":
			ok = d.intTo(&s.StartedAt)
		case "fa":
			ok = d.intTo(&s.FinishedAt)
		case "ev":
			ok = d.reflected(&s.Events)
		default:
			ok = d.skip()
		}
		if !ok {
			return false
		}
	}
	return true
}

// boolTo reads a bool (nil is false) into dst.
func (d *fastReader) boolTo(dst *bool) bool {
	c, ok := d.code()
	switch {
	case !ok:
		return false
	case c == 0xc0 || c == 0xc2:
		*dst = false
	case c == 0xc3:
		*dst = true
	default:
		return false
	}
	return true
}
