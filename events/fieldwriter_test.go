package events

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

// TestFieldWriterBytesMatchEncoder: onto bytes, every value a FieldWriter
// writes — integers at each end of every width msgpack picks, strings
// and maps at each length boundary — is what msgpack's encoder writes.
func TestFieldWriterBytesMatchEncoder(t *testing.T) {
	ints := []int64{0, 1, 127, 128, 255, 256, 65535, 65536, math.MaxUint32, math.MaxUint32 + 1, math.MaxInt64,
		-1, -32, -33, -128, -129, -32768, -32769, math.MinInt32, math.MinInt32 - 1, math.MinInt64}
	lens := []int{0, 15, 16, 31, 32, 255, 256, 65535, 65536}
	write := func(w *FieldWriter) {
		for _, n := range ints {
			w.Int("i", n, true)
			w.Int64("l", n, true)
			w.Uint("u", uint64(n), true)
		}
		for _, n := range lens {
			w.Str(strings.Repeat("k", n%40), strings.Repeat("v", n), true)
			w.Map(n)
		}
		w.Bool("t", true, true)
		w.Bool("f", false, true)
		w.Str("skipped", "x", false)
		w.Nil()
		w.Encode(map[string]*TaskState{"b": {State: "dead"}, "a": nil})
		w.Encode([]string{"x"})
	}
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	enc.SetSortMapKeys(true)
	through := WriterTo(enc)
	write(&through)
	onto := FieldWriter{}
	write(&onto)
	if through.Err() != nil || onto.Err() != nil {
		t.Fatal(through.Err(), onto.Err())
	}
	if !bytes.Equal(onto.b, buf.Bytes()) {
		t.Fatalf("onto bytes:\n%x\nthrough the encoder:\n%x", onto.b, buf.Bytes())
	}
}

// TestFieldEncoderNilPointer: a nil FieldEncoder encodes as nil, as it
// does through the encoder, rather than calling its method.
func TestFieldEncoderNilPointer(t *testing.T) {
	for _, v := range []any{(*Allocation)(nil), (*TaskState)(nil), (*Evaluation)(nil)} {
		got, err := AppendMarshal([]byte{1}, v)
		if err != nil || !bytes.Equal(got, []byte{1, 0xc0}) {
			t.Errorf("%T nil: %x, %v", v, got, err)
		}
	}
}
