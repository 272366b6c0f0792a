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
	if r := bytesOf(dec); r != nil {
		d := fastReader{b: r.b, i: r.i}
		if u.decodeFast(&d) {
			r.i = d.i
			return nil
		}
	}
	return dec.Decode((*plainClientUpdate)(u))
}

// decodeFast decodes the update at d into u, as reflection does.
func (u *AllocClientUpdate) decodeFast(d *fastReader) bool {
	strs := &stringSpans{src: d.b}
	ok := d.fields(func(key []byte) bool {
		switch string(key) {
		case "id":
			return d.strTo(strs, &u.ID)
		case "cs":
			return d.strTo(strs, &u.ClientStatus)
		case "cd":
			return d.strTo(strs, &u.ClientDescription)
		case "ts":
			return d.taskStates(&u.TaskStates, strs)
		case "depst":
			return d.reflected(&u.DeploymentStatus)
		}
		return d.skip()
	})
	if ok {
		strs.set()
	}
	return ok
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
	return d.fields(func(key []byte) bool {
		switch string(key) {
		case "st":
			return d.strTo(strs, &s.State)
		case "f":
			return d.boolTo(&s.Failed)
		case "r":
			return d.intFieldTo(&s.Restarts)
		case "sa":
			return d.intTo(&s.StartedAt)
		case "fa":
			return d.intTo(&s.FinishedAt)
		case "ev":
			return d.reflected(&s.Events)
		}
		return d.skip()
	})
}
