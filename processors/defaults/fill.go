package defaults

import "reflect"

// Fill sets each exported field of *cfg that holds its zero value to the
// same field of def. T must be a struct type; embedded structs are filled
// field by field.
func Fill[T any](cfg *T, def T) {
	fill(reflect.ValueOf(cfg).Elem(), reflect.ValueOf(def))
}

func fill(dst, def reflect.Value) {
	for i := range dst.NumField() {
		f := dst.Type().Field(i)
		if !f.IsExported() {
			continue
		}
		d, v := dst.Field(i), def.Field(i)
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			fill(d, v)
			continue
		}
		if d.IsZero() {
			d.Set(v)
		}
	}
}
