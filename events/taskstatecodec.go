package events

import "github.com/vmihailenco/msgpack/v5"

var _ msgpack.CustomEncoder = (*TaskState)(nil)

// EncodeMsgpack implements msgpack.CustomEncoder: the bytes reflection
// writes (TestTaskStateEncoder and FuzzTaskStateEncoder hold it to them),
// without reflection's walk of the fields and the slice it makes to leave
// out the empty ones (every allocation row a client update writes holds
// its tasks' states); a task's events are encoded by reflection.
func (s TaskState) EncodeMsgpack(enc *msgpack.Encoder) error {
	n := 1 + countSet(s.Failed, s.Restarts != 0, s.StartedAt != 0, s.FinishedAt != 0, len(s.Events) > 0) // st: never omitted
	w := fieldWriter{enc: enc}
	w.err = enc.EncodeMapLen(n)
	w.str("st", s.State, true)
	if s.Failed {
		w.key("f")
		w.do(enc.EncodeBool(true))
	}
	if s.Restarts != 0 {
		w.key("r")
		w.do(enc.EncodeInt(int64(s.Restarts)))
	}
	w.int64("sa", s.StartedAt)
	w.int64("fa", s.FinishedAt)
	w.value("ev", s.Events, len(s.Events) > 0)
	return w.err
}
