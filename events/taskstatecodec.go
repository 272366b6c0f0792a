package events

import "github.com/vmihailenco/msgpack/v5"

var _ msgpack.CustomEncoder = (*TaskState)(nil)

// EncodeMsgpack implements msgpack.CustomEncoder: the bytes reflection
// writes (TestTaskStateEncoder and FuzzTaskStateEncoder hold it to them),
// without reflection's walk of the fields and the slice it makes to leave
// out the empty ones (every allocation row a client update writes holds
// its tasks' states); a task's events are encoded by reflection.
func (s TaskState) EncodeMsgpack(enc *msgpack.Encoder) error {
	n := 1 + CountSet(s.Failed, s.Restarts != 0, s.StartedAt != 0, s.FinishedAt != 0, len(s.Events) > 0) // st: never omitted
	w := NewFieldWriter(enc, n)
	w.Str("st", s.State, true)
	w.Bool("f", true, s.Failed)
	w.Int("r", int64(s.Restarts), s.Restarts != 0)
	w.Int64("sa", s.StartedAt, s.StartedAt != 0)
	w.Int64("fa", s.FinishedAt, s.FinishedAt != 0)
	w.Value("ev", s.Events, len(s.Events) > 0)
	return w.Err()
}
