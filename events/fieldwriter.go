package events

import "github.com/vmihailenco/msgpack/v5"

// FieldWriter writes a struct's fields as the entries of a msgpack map,
// byte for byte as reflection writes them, for a type that encodes itself
// to spare reflection's walk of its fields (an allocation, an evaluation,
// a projection's row): each field is named, then its value encoded as
// reflection encodes its Go type, and one left out (omitempty) when set
// says so. It keeps the first error.
type FieldWriter struct {
	enc *msgpack.Encoder
	err error
}

// NewFieldWriter writes to enc the header of a map of n fields (the
// fields never left out and the CountSet of the others).
func NewFieldWriter(enc *msgpack.Encoder, n int) FieldWriter {
	w := FieldWriter{enc: enc}
	w.Map(n)
	return w
}

// CountSet returns how many of fields are set: with those never left out,
// the size of a struct's map.
func CountSet(fields ...bool) int {
	n := 0
	for _, set := range fields {
		if set {
			n++
		}
	}
	return n
}

func (w *FieldWriter) do(err error) {
	if w.err == nil {
		w.err = err
	}
}

// Map writes the header of a map of n fields: the value of the field just
// named (Key), a struct within the struct.
func (w *FieldWriter) Map(n int) { w.do(w.enc.EncodeMapLen(n)) }

// Key names the next field.
func (w *FieldWriter) Key(k string) { w.do(w.enc.EncodeString(k)) }

// Str writes the string field k when set.
func (w *FieldWriter) Str(k, v string, set bool) {
	if set {
		w.Key(k)
		w.do(w.enc.EncodeString(v))
	}
}

// Int writes the field k of Go type int (or int8 to int32) when set.
func (w *FieldWriter) Int(k string, v int64, set bool) {
	if set {
		w.Key(k)
		w.do(w.enc.EncodeInt(v))
	}
}

// Int64 writes the field k of Go type int64 (a time.Duration too) when
// set: reflection writes an int64 in full, an int compactly.
func (w *FieldWriter) Int64(k string, v int64, set bool) {
	if set {
		w.Key(k)
		w.do(w.enc.EncodeInt64(v))
	}
}

// Uint writes the uint64 field k when set.
func (w *FieldWriter) Uint(k string, v uint64, set bool) {
	if set {
		w.Key(k)
		w.do(w.enc.EncodeUint64(v))
	}
}

// Bool writes the bool field k when set.
func (w *FieldWriter) Bool(k string, v, set bool) {
	if set {
		w.Key(k)
		w.do(w.enc.EncodeBool(v))
	}
}

// Value writes the field k by reflection (or its type's own encoder) when
// set.
func (w *FieldWriter) Value(k string, v any, set bool) {
	if set {
		w.Key(k)
		w.do(w.enc.Encode(v))
	}
}

// Err returns the first error of the writes.
func (w *FieldWriter) Err() error { return w.err }
