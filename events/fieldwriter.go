package events

import (
	"encoding/binary"
	"math"
	"reflect"

	"github.com/vmihailenco/msgpack/v5"
	"github.com/vmihailenco/msgpack/v5/msgpcode"
)

// FieldWriter writes a struct's fields as the entries of a msgpack map,
// byte for byte as reflection writes them, for a type that encodes itself
// to spare reflection's walk of its fields (an allocation, an evaluation,
// a projection's row): each field is named, then its value encoded as
// reflection encodes its Go type, and one left out (omitempty) when set
// says so. It keeps the first error.
//
// It writes either through a msgpack encoder (the type's EncodeMsgpack,
// when the type is encoded within another value) or, for a FieldEncoder
// that Marshal or AppendMarshal encodes itself, straight onto a byte
// slice: no encoder, its writer and its dispatch between the bytes.
type FieldWriter struct {
	enc *msgpack.Encoder // nil: append to b
	b   []byte
	err error
}

// FieldEncoder is a value that writes itself through a FieldWriter: the
// header of its map (Map), then its fields. Marshal and AppendMarshal
// write it straight onto their bytes; its EncodeMsgpack calls EncodeFields
// with a WriterTo its encoder.
type FieldEncoder interface {
	EncodeFields(w *FieldWriter)
}

// WriterTo returns a writer through enc, for a FieldEncoder's
// EncodeMsgpack to call its EncodeFields with.
func WriterTo(enc *msgpack.Encoder) FieldWriter { return FieldWriter{enc: enc} }

// appendFields appends v's encoding to dst.
func appendFields(dst []byte, v FieldEncoder) ([]byte, error) {
	w := FieldWriter{b: dst}
	v.EncodeFields(&w)
	if w.err != nil {
		return dst, w.err
	}
	return w.b, nil
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

// Map writes the header of a map of n entries: a struct's own (first), or
// the value of the field just named (Key), a struct within the struct.
func (w *FieldWriter) Map(n int) {
	if w.enc != nil {
		w.do(w.enc.EncodeMapLen(n))
		return
	}
	switch {
	case n < 16:
		w.b = append(w.b, msgpcode.FixedMapLow|byte(n))
	case n <= math.MaxUint16:
		w.b = binary.BigEndian.AppendUint16(append(w.b, msgpcode.Map16), uint16(n))
	default:
		w.b = binary.BigEndian.AppendUint32(append(w.b, msgpcode.Map32), uint32(n))
	}
}

// Nil writes a nil: the value of the field just named.
func (w *FieldWriter) Nil() {
	if w.enc != nil {
		w.do(w.enc.EncodeNil())
		return
	}
	w.b = append(w.b, msgpcode.Nil)
}

// Key names the next field (or map entry).
func (w *FieldWriter) Key(k string) { w.string(k) }

func (w *FieldWriter) string(s string) {
	if w.enc != nil {
		w.do(w.enc.EncodeString(s))
		return
	}
	switch n := len(s); {
	case n < 32:
		w.b = append(w.b, msgpcode.FixedStrLow|byte(n))
	case n < 256:
		w.b = append(w.b, msgpcode.Str8, byte(n))
	case n <= math.MaxUint16:
		w.b = binary.BigEndian.AppendUint16(append(w.b, msgpcode.Str16), uint16(n))
	default:
		w.b = binary.BigEndian.AppendUint32(append(w.b, msgpcode.Str32), uint32(n))
	}
	w.b = append(w.b, s...)
}

// Str writes the string field k when set.
func (w *FieldWriter) Str(k, v string, set bool) {
	if set {
		w.Key(k)
		w.string(v)
	}
}

// Int writes the field k of Go type int (or int8 to int32) when set.
func (w *FieldWriter) Int(k string, v int64, set bool) {
	if !set {
		return
	}
	w.Key(k)
	if w.enc != nil {
		w.do(w.enc.EncodeInt(v))
		return
	}
	w.b = appendCompactInt(w.b, v)
}

// appendCompactInt appends n in as few bytes as msgpack's EncodeInt does.
func appendCompactInt(b []byte, n int64) []byte {
	be := binary.BigEndian
	switch {
	case n >= 0 && n <= math.MaxInt8, n < 0 && n >= int64(int8(msgpcode.NegFixedNumLow)):
		return append(b, byte(n))
	case n >= 0 && n <= math.MaxUint8:
		return append(b, msgpcode.Uint8, byte(n))
	case n >= 0 && n <= math.MaxUint16:
		return be.AppendUint16(append(b, msgpcode.Uint16), uint16(n))
	case n >= 0 && n <= math.MaxUint32:
		return be.AppendUint32(append(b, msgpcode.Uint32), uint32(n))
	case n >= 0:
		return be.AppendUint64(append(b, msgpcode.Uint64), uint64(n))
	case n >= math.MinInt8:
		return append(b, msgpcode.Int8, byte(n))
	case n >= math.MinInt16:
		return be.AppendUint16(append(b, msgpcode.Int16), uint16(n))
	case n >= math.MinInt32:
		return be.AppendUint32(append(b, msgpcode.Int32), uint32(n))
	}
	return be.AppendUint64(append(b, msgpcode.Int64), uint64(n))
}

// Int64 writes the field k of Go type int64 (a time.Duration too) when
// set: reflection writes an int64 in full, an int compactly.
func (w *FieldWriter) Int64(k string, v int64, set bool) {
	if !set {
		return
	}
	w.Key(k)
	if w.enc != nil {
		w.do(w.enc.EncodeInt64(v))
		return
	}
	w.b = binary.BigEndian.AppendUint64(append(w.b, msgpcode.Int64), uint64(v))
}

// Uint writes the uint64 field k when set.
func (w *FieldWriter) Uint(k string, v uint64, set bool) {
	if !set {
		return
	}
	w.Key(k)
	if w.enc != nil {
		w.do(w.enc.EncodeUint64(v))
		return
	}
	w.b = binary.BigEndian.AppendUint64(append(w.b, msgpcode.Uint64), v)
}

// Bool writes the bool field k when set.
func (w *FieldWriter) Bool(k string, v, set bool) {
	if !set {
		return
	}
	w.Key(k)
	if w.enc != nil {
		w.do(w.enc.EncodeBool(v))
		return
	}
	if v {
		w.b = append(w.b, msgpcode.True)
	} else {
		w.b = append(w.b, msgpcode.False)
	}
}

// Value writes the field k by reflection (or its type's own encoder) when
// set.
func (w *FieldWriter) Value(k string, v any, set bool) {
	if set {
		w.Key(k)
		w.Encode(v)
	}
}

// Encode writes v as Marshal does: the value of the field (or map entry)
// just named. Onto bytes, a FieldEncoder writes itself and a map of task
// states is written in key order; anything else goes through an encoder.
func (w *FieldWriter) Encode(v any) {
	if w.enc != nil {
		w.do(w.enc.Encode(v))
		return
	}
	switch v := v.(type) {
	case map[string]*TaskState:
		w.taskStates(v)
		return
	case FieldEncoder:
		if !nilPointer(v) {
			v.EncodeFields(w)
			return
		}
	}
	b, err := appendEncoded(w.b, v)
	w.b = b
	w.do(err)
}

// nilPointer reports whether v holds a nil pointer, which encodes as nil
// rather than calling its (value receiver's) method.
func nilPointer(v any) bool {
	rv := reflect.ValueOf(v)
	return rv.Kind() == reflect.Pointer && rv.IsNil()
}

// Err returns the first error of the writes.
func (w *FieldWriter) Err() error { return w.err }
