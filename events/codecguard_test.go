package events

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

// fill sets every field of v, recursively, to a value that is not zero
// (and n to tell values apart), so that a field a hand-written codec does
// not know of shows.
func fill(v reflect.Value, n int) {
	switch v.Kind() {
	case reflect.String:
		v.SetString(string(rune('a'+n%26)) + "x")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(n + 1))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(n + 1))
	case reflect.Float32, reflect.Float64:
		v.SetFloat(float64(n) + 0.5)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), n+1)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fill(v.Index(0), n+1)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fill(k, n+1)
		fill(e, n+2)
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), n+i)
			}
		}
	case reflect.Interface:
		v.Set(reflect.ValueOf("i"))
	}
}

// decode decodes data into v as the events' decoders do (the structure
// checked first, then read from the bytes themselves).
func decode(data []byte, v any) error { return decodeFrom(data, v, false, false) }

// sameAsReflection fails unless data decodes from bytes into fast as
// reflection decodes it into plain (fast's type without its decoder,
// holding what fast holds: fields absent from data are kept): the same
// value, or an error from both.
func sameAsReflection(t *testing.T, data []byte, fast, plain any) {
	t.Helper()
	werr := msgpack.Unmarshal(data, plain)
	gerr := decode(data, fast)
	if (werr == nil) != (gerr == nil) {
		t.Fatalf("%T from bytes: %v, reflection: %v", fast, gerr, werr)
	}
	got := reflect.ValueOf(fast).Elem().Interface()
	want := reflect.ValueOf(plain).Elem().Convert(reflect.TypeOf(fast).Elem()).Interface()
	if werr == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("%T from bytes %+v\nreflection %+v", fast, got, want)
	}
}

// encodesAsPlain fails t unless fast encodes as reflection encodes plain
// (its type without the encoder, holding what fast holds) — written
// straight onto bytes, a FieldEncoder's way — and in, a value holding
// fast (which msgpack's encoder encodes through fast's EncodeMsgpack),
// holds those bytes.
func encodesAsPlain(t *testing.T, fast, plain, in any) {
	t.Helper()
	want, err := Marshal(plain)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Marshal(fast)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("encoded %x\nreflection %x\n%+v", got, want, fast)
	}
	held, err := Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(held, want) {
		t.Fatalf("held in %T: %x, reflection %x", in, held, want)
	}
}

// addEncoded adds each of vs, encoded, to f's corpus.
func addEncoded(f *testing.F, vs ...any) {
	for _, v := range vs {
		data, err := Marshal(v)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
}

// TestHandCodecsKnowEveryField: every field of the types with a codec of
// their own set, each decodes from bytes as reflection decodes it into
// its plain twin, and an allocation, an evaluation and a task state
// encode to reflection's bytes — so a field added to one of them without
// its codec fails here.
func TestHandCodecsKnowEveryField(t *testing.T) {
	for _, c := range []struct{ fast, plain any }{
		{new(Allocation), new(plainAllocation)},
		{new(AllocClientUpdate), new(plainClientUpdate)},
		{new(Evaluation), new(plainEvaluation)},
		{new(AllocsPlaced), new(plainAllocsPlaced)},
		{new(AllocsClientUpdated), new(plainAllocsClientUpdated)},
		{new(EvalsUpserted), new(plainEvalsUpserted)},
		{new(Job), new(plainJob)},
		{new(JobRegistered), new(plainJobRegistered)},
		{new(Event), new(plainEvent)},
	} {
		fill(reflect.ValueOf(c.plain).Elem(), 0)
		data, err := msgpack.Marshal(c.plain)
		if err != nil {
			t.Fatal(err)
		}
		var got any
		if _, ok := c.fast.(*Event); ok {
			ev, err := DecodeEvent(data)
			if err != nil {
				t.Fatal(err)
			}
			got = ev
		} else {
			if err := decode(data, c.fast); err != nil {
				t.Fatalf("%T: %v", c.fast, err)
			}
			got = c.fast
		}
		back := reflect.New(reflect.TypeOf(c.plain).Elem())
		if err := msgpack.Unmarshal(data, back.Interface()); err != nil {
			t.Fatal(err)
		}
		want := back.Elem().Convert(reflect.TypeOf(c.fast).Elem()).Interface()
		if !reflect.DeepEqual(reflect.ValueOf(got).Elem().Interface(), want) {
			t.Errorf("%T decoded from bytes:\n%+v\nreflection:\n%+v", c.fast, reflect.ValueOf(got).Elem().Interface(), want)
		}
	}
	// The encoders: each plain twin filled, then its value in its type.
	for _, c := range []struct{ fast, plain any }{
		{new(Allocation), new(plainAllocation)},
		{new(Evaluation), new(plainEvaluation)},
		{new(TaskState), new(plainTaskState)},
	} {
		fill(reflect.ValueOf(c.plain).Elem(), 0)
		want, err := Marshal(c.plain)
		if err != nil {
			t.Fatal(err)
		}
		fast := reflect.ValueOf(c.fast).Elem()
		fast.Set(reflect.ValueOf(c.plain).Elem().Convert(fast.Type()))
		if got, err := Marshal(c.fast); err != nil || !bytes.Equal(got, want) {
			t.Errorf("%T encoded %x, %v\nreflection %x", c.fast, got, err, want)
		}
	}
}

// TestPayloadsEncodeAsDecoded: every registered payload, with every field
// set (and with none), encodes to the bytes it was decoded from. A
// projection that keeps a current event's payload as its row (Upcast:
// namespaces, keyring, jobs) then writes what one that decodes and
// encodes it again writes, so a store written either way equals a
// rebuild.
func TestPayloadsEncodeAsDecoded(t *testing.T) {
	for _, ty := range Types() {
		for _, full := range []bool{false, true} {
			p := ty.New()
			if full {
				fill(reflect.ValueOf(p).Elem(), 1)
			}
			raw, err := Marshal(p)
			if err != nil {
				t.Fatalf("%s: %v", ty.Name, err)
			}
			ev := Event{Type: ty.Name, Version: ty.Version, Payload: raw}
			got, err := Decode(&ev)
			if err != nil {
				t.Fatalf("%s: decode: %v", ty.Name, err)
			}
			again, err := Marshal(got)
			if err != nil {
				t.Fatalf("%s: %v", ty.Name, err)
			}
			if !bytes.Equal(again, raw) {
				t.Errorf("%s (fields set: %v) encodes to other bytes once decoded:\n%x\n%x", ty.Name, full, raw, again)
			}
		}
	}
}
