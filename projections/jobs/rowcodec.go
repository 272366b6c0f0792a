package jobs

import (
	"github.com/vmihailenco/msgpack/v5"

	"github.com/ordoplane/ordo/events"
)

// The rows a client update rewrites — its allocation's reference and its
// job's summary — encode themselves, to the bytes reflection writes
// (TestRowEncoders), without reflection's walk of their fields and the
// slice it makes to leave out the empty ones.

var (
	_ msgpack.CustomEncoder = (*allocRef)(nil)
	_ msgpack.CustomEncoder = (*summaryRow)(nil)
	_ msgpack.CustomEncoder = (*TaskGroupSummary)(nil)
	_ msgpack.CustomEncoder = (*Children)(nil)
	_ events.FieldEncoder   = (*allocRef)(nil)
	_ events.FieldEncoder   = (*summaryRow)(nil)
	_ events.FieldEncoder   = (*TaskGroupSummary)(nil)
	_ events.FieldEncoder   = (*Children)(nil)
	_ events.FieldEncoder   = groupCounts(nil)
)

// EncodeMsgpack implements msgpack.CustomEncoder (on a value, so that a
// value in a map encodes too).
func (r allocRef) EncodeMsgpack(enc *msgpack.Encoder) error {
	w := events.WriterTo(enc)
	r.EncodeFields(&w)
	return w.Err()
}

// EncodeFields implements events.FieldEncoder.
func (r allocRef) EncodeFields(w *events.FieldWriter) {
	w.Map(5) // none left out
	w.Str("ns", r.Namespace, true)
	w.Str("job", r.JobID, true)
	w.Str("tg", r.Group, true)
	w.Str("cs", r.ClientStatus, true)
	w.Uint("jci", r.JobCreateIndex, true)
}

// EncodeMsgpack implements msgpack.CustomEncoder (on a value, so that a
// value in a map encodes too).
func (g TaskGroupSummary) EncodeMsgpack(enc *msgpack.Encoder) error {
	w := events.WriterTo(enc)
	g.EncodeFields(&w)
	return w.Err()
}

// EncodeFields implements events.FieldEncoder.
func (g TaskGroupSummary) EncodeFields(w *events.FieldWriter) {
	w.Map(events.CountSet(g.Queued != 0, g.Complete != 0, g.Failed != 0,
		g.Running != 0, g.Starting != 0, g.Lost != 0, g.Unknown != 0))
	w.Int("q", int64(g.Queued), g.Queued != 0)
	w.Int("c", int64(g.Complete), g.Complete != 0)
	w.Int("f", int64(g.Failed), g.Failed != 0)
	w.Int("r", int64(g.Running), g.Running != 0)
	w.Int("s", int64(g.Starting), g.Starting != 0)
	w.Int("l", int64(g.Lost), g.Lost != 0)
	w.Int("u", int64(g.Unknown), g.Unknown != 0)
}

// EncodeMsgpack implements msgpack.CustomEncoder (on a value, so that a
// value in a map encodes too).
func (c Children) EncodeMsgpack(enc *msgpack.Encoder) error {
	w := events.WriterTo(enc)
	c.EncodeFields(&w)
	return w.Err()
}

// EncodeFields implements events.FieldEncoder.
func (c Children) EncodeFields(w *events.FieldWriter) {
	w.Map(events.CountSet(c.Pending != 0, c.Running != 0, c.Dead != 0))
	w.Int64("p", c.Pending, c.Pending != 0)
	w.Int64("r", c.Running, c.Running != 0)
	w.Int64("d", c.Dead, c.Dead != 0)
}

// EncodeMsgpack implements msgpack.CustomEncoder (on a value, so that a
// value in a map encodes too).
func (s summaryRow) EncodeMsgpack(enc *msgpack.Encoder) error {
	w := events.WriterTo(enc)
	s.EncodeFields(&w)
	return w.Err()
}

// EncodeFields implements events.FieldEncoder.
func (s summaryRow) EncodeFields(w *events.FieldWriter) {
	w.Map(2 + events.CountSet(len(s.Groups) > 0, s.Children != nil)) // st, jci: never left out
	w.Value("g", s.Groups, len(s.Groups) > 0)
	w.Value("ch", s.Children, s.Children != nil)
	w.Str("st", s.Status, true)
	w.Uint("jci", s.JobCreateIndex, true)
}
