package layout

import "github.com/ordoplane/ordo/storage/kv"

// OwnedSetter is a kv.Writer that can keep a value it is given instead of
// copying it (a key it copies, as every kv.Writer does); it never
// changes the value.
type OwnedSetter interface {
	SetOwned(key, value []byte) error
}

// SetOwned writes value at key through w, handing value over: the
// writer may keep it, and nobody changes it afterwards (the index rows
// of an entry share one).
func SetOwned(w kv.Writer, key, value []byte) error {
	if o, ok := w.(OwnedSetter); ok {
		return o.SetOwned(key, value)
	}
	return w.Set(key, value)
}

// Encoder appends the encoding of a value a writer keeps to dst
// (projections.Codec).
type Encoder interface {
	AppendEncoded(dst []byte, v any) ([]byte, error)
}

// ValueState is what a ValueWriter knows of a row.
type ValueState uint8

const (
	// ValueUnknown: nothing decoded; read the bytes.
	ValueUnknown ValueState = iota
	// ValueAbsent: the row does not exist.
	ValueAbsent
	// ValueKept: the decoded value is kept.
	ValueKept
)

// ValueWriter is a kv.Writer that keeps decoded row values (a replay's
// writer). The values it keeps and is given are shared: nobody may
// change them, a projection changes a copy and puts that.
type ValueWriter interface {
	// Value returns the value kept for the row at key, with the row's
	// create and modify indexes.
	Value(key []byte) (v any, create, modify uint64, st ValueState)
	// KeepValue keeps v as the decoded value of the row at key, which
	// Get has just returned.
	KeepValue(key []byte, v any)
	// SetValue writes the row at key, created and modified at create
	// and modify, with value v, encoded by enc when the writer needs the
	// bytes.
	SetValue(key []byte, create, modify uint64, v any, enc Encoder) error
}
