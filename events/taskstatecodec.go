package events

import (
	"slices"

	"github.com/vmihailenco/msgpack/v5"
)

var (
	_ msgpack.CustomEncoder = (*TaskState)(nil)
	_ FieldEncoder          = (*TaskState)(nil)
)

// EncodeMsgpack implements msgpack.CustomEncoder: the bytes reflection
// writes (TestTaskStateEncoder and FuzzTaskStateEncoder hold it to them),
// without reflection's walk of the fields and the slice it makes to leave
// out the empty ones (every allocation row a client update writes holds
// its tasks' states); a task's events are encoded by reflection.
func (s TaskState) EncodeMsgpack(enc *msgpack.Encoder) error {
	w := WriterTo(enc)
	s.EncodeFields(&w)
	return w.Err()
}

// EncodeFields implements FieldEncoder.
func (s TaskState) EncodeFields(w *FieldWriter) {
	w.Map(1 + CountSet(s.Failed, s.Restarts != 0, s.StartedAt != 0, s.FinishedAt != 0, len(s.Events) > 0)) // st: never omitted
	w.Str("st", s.State, true)
	w.Bool("f", true, s.Failed)
	w.Int("r", int64(s.Restarts), s.Restarts != 0)
	w.Int64("sa", s.StartedAt, s.StartedAt != 0)
	w.Int64("fa", s.FinishedAt, s.FinishedAt != 0)
	w.Value("ev", s.Events, len(s.Events) > 0)
}

// taskStates writes an allocation's task states as Marshal does: a map in
// key order, a nil state as nil.
func (w *FieldWriter) taskStates(m map[string]*TaskState) {
	if m == nil {
		w.Nil()
		return
	}
	var small [8]string // most allocations run a task or a few
	names := small[:0]
	for name := range m {
		names = append(names, name)
	}
	slices.Sort(names)
	w.Map(len(names))
	for _, name := range names {
		w.Key(name)
		if s := m[name]; s != nil {
			s.EncodeFields(w)
		} else {
			w.Nil()
		}
	}
}
