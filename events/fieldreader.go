package events

// FieldReader reads a struct's fields from msgpack bytes as reflection
// decodes them, for a type outside this package that decodes itself (a
// projection's row) to spare reflection's walk: FieldWriter's mirror.
// Its strings are made together, in one allocation, once the whole value
// is read. Each method reports false for a form it does not take; the
// value then goes to reflection whole.
type FieldReader struct {
	d    fastReader
	strs *stringSpans
}

// FieldDecoder is a value that reads itself through a FieldReader, as
// reflection would decode it (its fields absent from the input left as
// they are); it may be partly written when it reports false, and
// reflection then decodes it. Unmarshal, and so a projection's Codec,
// hands it its bytes.
type FieldDecoder interface {
	DecodeFields(r *FieldReader) bool
}

// ReadFields decodes data into v through its DecodeFields, and reports
// whether it could (Unmarshal then leaves data to reflection).
func ReadFields(data []byte, v FieldDecoder) bool {
	if nilPointer(v) {
		return false
	}
	r := FieldReader{d: fastReader{b: data}, strs: &stringSpans{src: data}}
	if !v.DecodeFields(&r) {
		return false
	}
	r.strs.set()
	return true
}

// Fields reads a map (not a nil), calling field with each key while it
// returns true; the value is field's to read.
func (r *FieldReader) Fields(field func(key []byte) bool) bool { return r.d.fields(field) }

// MapLen reads a map's header: its length, -1 for a nil.
func (r *FieldReader) MapLen() (int, bool) {
	if r.d.nil() {
		return -1, true
	}
	n, ok := r.d.mapLen()
	return n, ok && n <= len(r.d.b)-r.d.i
}

// Nil reads past a nil, and reports whether there was one.
func (r *FieldReader) Nil() bool { return r.d.nil() }

// Str reads a string (nil is empty) into dst, set once the value is read.
func (r *FieldReader) Str(dst *string) bool { return r.d.strTo(r.strs, dst) }

// Key reads a string made now, for a caller that needs it at once (a
// map's key it sorts by).
func (r *FieldReader) Key() (string, bool) {
	b, ok := r.d.str()
	return string(b), ok
}

// Int reads an integer into dst, an int.
func (r *FieldReader) Int(dst *int) bool { return r.d.intFieldTo(dst) }

// Int64 reads an integer into dst.
func (r *FieldReader) Int64(dst *int64) bool { return r.d.intTo(dst) }

// Uint reads an unsigned integer into dst.
func (r *FieldReader) Uint(dst *uint64) bool { return r.d.uintTo(dst) }

// Bool reads a bool (nil is false) into dst.
func (r *FieldReader) Bool(dst *bool) bool { return r.d.boolTo(dst) }

// Reflected decodes the value into v, a pointer to a field, by
// reflection.
func (r *FieldReader) Reflected(v any) bool { return r.d.reflected(v) }

// Skip reads past a value.
func (r *FieldReader) Skip() bool { return r.d.skip() }
