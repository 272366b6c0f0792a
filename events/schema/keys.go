package schema

import (
	"fmt"
	"reflect"
	"slices"
	"time"

	"github.com/ordoplane/ordo/events"
)

// KeyKinds returns the kinds of entity key (namespace, job, alloc, …) a
// payload of typ can carry, in the order EntityKeys lists them: the kinds
// of the keys of a payload filled by Filled.
func KeyKinds(typ events.Type) (kinds []string, err error) {
	p, err := Filled(typ)
	if err != nil {
		return nil, err
	}
	defer func() {
		if v := recover(); v != nil {
			kinds, err = nil, fmt.Errorf("%s: EntityKeys of a filled payload panicked: %v", typ.Name, v)
		}
	}()
	for _, k := range p.EntityKeys() {
		if !slices.Contains(kinds, k.Kind) {
			kinds = append(kinds, k.Kind)
		}
	}
	return kinds, nil
}

// Filled returns a payload of typ with every field set: each string "x",
// number 1, bool true, slice and map one element, pointer non-nil, to a
// bounded depth. Its entity keys show every kind the type can touch, and
// its JSON has every optional field, so tests validate it against the
// schema.
func Filled(typ events.Type) (events.Payload, error) {
	if typ.New == nil {
		return nil, fmt.Errorf("%s: no payload constructor", typ.Name)
	}
	p := typ.New()
	v := reflect.ValueOf(p)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return nil, fmt.Errorf("%s: payload %T is not a non-nil pointer", typ.Name, p)
	}
	fill(v.Elem(), 0)
	return p, nil
}

// timeOne is the time Filled puts in time fields.
var timeOne = time.Unix(1, 0).UTC()

// maxFillDepth bounds fill on recursive types.
const maxFillDepth = 12

func fill(v reflect.Value, depth int) {
	if depth > maxFillDepth || !v.CanSet() {
		return
	}
	switch v.Kind() {
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(1)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		v.SetUint(1)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(1)
	case reflect.String:
		v.SetString("x")
	case reflect.Pointer:
		e := reflect.New(v.Type().Elem())
		fill(e.Elem(), depth+1)
		v.Set(e)
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 1, 1)
		fill(s.Index(0), depth+1)
		v.Set(s)
	case reflect.Array:
		for i := range v.Len() {
			fill(v.Index(i), depth+1)
		}
	case reflect.Map:
		k := reflect.New(v.Type().Key()).Elem()
		fill(k, depth+1)
		e := reflect.New(v.Type().Elem()).Elem()
		fill(e, depth+1)
		m := reflect.MakeMapWithSize(v.Type(), 1)
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.Struct:
		if v.Type() == timeType {
			v.Set(reflect.ValueOf(timeOne))
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), depth+1)
			}
		}
	case reflect.Interface:
		if v.NumMethod() == 0 {
			v.Set(reflect.ValueOf("x"))
		}
	}
}
