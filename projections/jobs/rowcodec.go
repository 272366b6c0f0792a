package jobs

import (
	"errors"

	"github.com/vmihailenco/msgpack/v5"
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
)

// rowWriter writes a row's fields as a msgpack map's entries, keeping
// every error.
type rowWriter struct {
	enc *msgpack.Encoder
	err error
}

func (w *rowWriter) do(err error) { w.err = errors.Join(w.err, err) }

func (w *rowWriter) str(k, v string) {
	w.do(w.enc.EncodeString(k))
	w.do(w.enc.EncodeString(v))
}

// ints writes the int fields of vals named by keys, those not zero (all
// omitempty), after a map header counting them.
func (w *rowWriter) ints(keys []string, vals []int) {
	n := 0
	for _, v := range vals {
		if v != 0 {
			n++
		}
	}
	w.do(w.enc.EncodeMapLen(n))
	for i, v := range vals {
		if v != 0 {
			w.do(w.enc.EncodeString(keys[i]))
			w.do(w.enc.EncodeInt(int64(v)))
		}
	}
}

// EncodeMsgpack implements msgpack.CustomEncoder (on a value, so that a
// value in a map encodes too).
func (r allocRef) EncodeMsgpack(enc *msgpack.Encoder) error {
	w := rowWriter{enc: enc}
	w.do(enc.EncodeMapLen(5))
	w.str("ns", r.Namespace)
	w.str("job", r.JobID)
	w.str("tg", r.Group)
	w.str("cs", r.ClientStatus)
	w.do(enc.EncodeString("jci"))
	w.do(enc.EncodeUint64(r.JobCreateIndex))
	return w.err
}

var groupKeys = []string{"q", "c", "f", "r", "s", "l", "u"}

// EncodeMsgpack implements msgpack.CustomEncoder (on a value, so that a
// value in a map encodes too).
func (g TaskGroupSummary) EncodeMsgpack(enc *msgpack.Encoder) error {
	w := rowWriter{enc: enc}
	w.ints(groupKeys, []int{g.Queued, g.Complete, g.Failed, g.Running, g.Starting, g.Lost, g.Unknown})
	return w.err
}

// EncodeMsgpack implements msgpack.CustomEncoder (on a value, so that a
// value in a map encodes too).
func (c Children) EncodeMsgpack(enc *msgpack.Encoder) error {
	w := rowWriter{enc: enc}
	n := 0
	for _, v := range [...]int64{c.Pending, c.Running, c.Dead} {
		if v != 0 {
			n++
		}
	}
	w.do(enc.EncodeMapLen(n))
	for i, v := range [...]int64{c.Pending, c.Running, c.Dead} {
		if v != 0 {
			w.do(enc.EncodeString([...]string{"p", "r", "d"}[i]))
			w.do(enc.EncodeInt64(v))
		}
	}
	return w.err
}

// EncodeMsgpack implements msgpack.CustomEncoder (on a value, so that a
// value in a map encodes too).
func (s summaryRow) EncodeMsgpack(enc *msgpack.Encoder) error {
	w := rowWriter{enc: enc}
	n := 2 // st, jci: never omitted
	if len(s.Groups) > 0 {
		n++
	}
	if s.Children != nil {
		n++
	}
	w.do(enc.EncodeMapLen(n))
	if len(s.Groups) > 0 {
		w.do(enc.EncodeString("g"))
		w.do(s.Groups.EncodeMsgpack(enc))
	}
	if s.Children != nil {
		w.do(enc.EncodeString("ch"))
		w.do(s.Children.EncodeMsgpack(enc))
	}
	w.str("st", s.Status)
	w.do(enc.EncodeString("jci"))
	w.do(enc.EncodeUint64(s.JobCreateIndex))
	return w.err
}
