package events_test

import (
	"errors"
	"io"
	"reflect"
	"testing"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/ordoplane/ordo/events"
)

// rawFields reads every string field of data through Fields, and notes
// the others by key.
func rawFields(data []byte) (map[string]string, []string, error) {
	strs := map[string]string{}
	var other []string
	err := events.Fields(data, func(key, value []byte) error {
		s, err := events.String(value)
		if err != nil {
			other = append(other, string(key))
			return nil
		}
		strs[string(key)] = s
		return nil
	})
	return strs, other, err
}

// Fields walks a struct's map in order, giving each key and value; the
// string values decode as the reflecting decoder decodes them, long
// strings (str8, str16) included, and nil as "".
func TestFieldsReadsStructs(t *testing.T) {
	long := string(make([]byte, 300))
	e := events.Evaluation{ID: "e1", Namespace: "default", JobID: long, Status: "pending", Priority: 50,
		QueuedAllocations: map[string]int{"web": 2}, FailedTGAllocs: map[string]*events.AllocMetric{"web": {NodesEvaluated: 3}}}
	b, err := events.Marshal(&e)
	if err != nil {
		t.Fatal(err)
	}
	strs, other, err := rawFields(b)
	if err != nil {
		t.Fatal(err)
	}
	if strs["id"] != "e1" || strs["ns"] != "default" || strs["job"] != long || strs["st"] != "pending" {
		t.Fatalf("strings = %q", strs)
	}
	if want := []string{"pri", "qa", "fail"}; !containsAll(other, want) {
		t.Fatalf("other fields %v, want %v among them", other, want)
	}
	var m map[string]any
	if err := msgpack.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if len(strs)+len(other) != len(m) {
		t.Fatalf("Fields gave %d fields, the row holds %d", len(strs)+len(other), len(m))
	}
	nilRow, _ := msgpack.Marshal(map[string]any{"x": nil})
	if strs, _, err := rawFields(nilRow); err != nil || strs["x"] != "" {
		t.Fatalf("nil field = %q, %v", strs, err)
	}
	for _, bad := range [][]byte{nil, {0x91, 0x01}, {0x81, 0x01, 0x01}, b[:len(b)-1]} {
		if _, _, err := rawFields(bad); err == nil {
			t.Errorf("Fields(%x) did not fail", bad)
		}
	}
}

// TestFieldsTruncatedHeader: a map16 or map32 header cut short is
// unexpected EOF, not "not a map", and so is an empty row; a code that is
// no map says so.
func TestFieldsTruncatedHeader(t *testing.T) {
	none := func(_, _ []byte) error { return nil }
	for _, data := range [][]byte{{}, {0xde}, {0xde, 0x00}, {0xdf, 0x00, 0x00, 0x00}} {
		if err := events.Fields(data, none); !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("Fields(%x) = %v, want unexpected EOF", data, err)
		}
	}
	if err := events.Fields([]byte{0xde, 0x00, 0x00}, none); err != nil {
		t.Errorf("an empty map16: %v", err)
	}
	if err := events.Fields([]byte{0x91, 0x01}, none); err == nil || errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("an array: %v, want not a map", err)
	}
}

func containsAll(have, want []string) bool {
	for _, w := range want {
		found := false
		for _, h := range have {
			found = found || h == w
		}
		if !found {
			return false
		}
	}
	return true
}

// Fields never panics, and whatever string fields it reads from a map the
// reflecting decoder accepts are the ones that decoder reads.
func FuzzFields(f *testing.F) {
	for _, v := range []any{map[string]any{"a": "b", "n": 1, "m": map[string]int{"x": 1}}, map[string]string{}, []int{1}, "s"} {
		b, _ := msgpack.Marshal(v)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		strs, _, err := rawFields(data)
		if err != nil {
			return
		}
		var m map[string]any
		if msgpack.Unmarshal(data, &m) != nil {
			return
		}
		for k, s := range strs {
			if v, ok := m[k]; ok && v != nil && !reflect.DeepEqual(v, s) {
				if _, isStr := v.(string); isStr {
					t.Fatalf("field %q: Fields read %q, the decoder %q", k, s, v)
				}
			}
		}
	})
}
