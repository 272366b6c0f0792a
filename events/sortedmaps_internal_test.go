package events

import (
	"reflect"
	"testing"
)

// TestEveryPayloadMapEncodesSorted walks every registered payload type and
// fails on a map type that would encode in random order: a new payload
// with a new map type must be added to sortedMapTypes.
func TestEveryPayloadMapEncodesSorted(t *testing.T) {
	sorted := map[reflect.Type]bool{
		reflect.TypeOf(map[string]string(nil)): true,
		reflect.TypeOf(map[string]bool(nil)):   true,
		reflect.TypeOf(map[string]any(nil)):    true,
		reflect.TypeOf(TaskConfig(nil)):        true, // canonical, encoded as map[string]any
	}
	for _, m := range sortedMapTypes {
		sorted[reflect.TypeOf(m)] = true
	}
	seen := map[reflect.Type]bool{}
	var walk func(rt reflect.Type, path string)
	walk = func(rt reflect.Type, path string) {
		if seen[rt] {
			return
		}
		seen[rt] = true
		switch rt.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Array:
			walk(rt.Elem(), path)
		case reflect.Map:
			if !sorted[rt] {
				t.Errorf("%s: %v encodes in random order; add it to sortedMapTypes", path, rt)
			}
			walk(rt.Elem(), path)
		case reflect.Struct:
			for i := range rt.NumField() {
				f := rt.Field(i)
				if f.IsExported() && f.Tag.Get("msgpack") != "-" {
					walk(f.Type, path+"."+f.Name)
				}
			}
		}
	}
	for _, typ := range Types() {
		walk(reflect.TypeOf(typ.New()), typ.Name)
	}
}
