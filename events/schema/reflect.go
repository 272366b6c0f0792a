package schema

import (
	"encoding"
	"encoding/json"
	"fmt"
	"path"
	"reflect"
	"slices"
	"strings"
	"time"
	"unicode"
)

var (
	timeType          = reflect.TypeFor[time.Time]()
	durationType      = reflect.TypeFor[time.Duration]()
	jsonMarshalerType = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
)

// reflector turns Go types into schemas following encoding/json's rules.
// Named struct types go to defs once and are referred to with $ref, which
// also ends recursion.
type reflector struct {
	defs  map[string]*Schema
	names map[reflect.Type]string
}

func newReflector() *reflector {
	return &reflector{defs: map[string]*Schema{}, names: map[reflect.Type]string{}}
}

// schemaOf returns the schema of the JSON encoding/json writes for a value
// of type t.
func (r *reflector) schemaOf(t reflect.Type) (*Schema, error) {
	switch {
	case t.Kind() == reflect.Pointer:
		s, err := r.schemaOf(t.Elem())
		if err != nil {
			return nil, err
		}
		return nullable(s), nil
	case t == timeType:
		return &Schema{Type: Types{"string"}, Format: "date-time"}, nil
	case implements(t, jsonMarshalerType):
		// A custom encoding the generator cannot see into.
		return &Schema{Description: "custom JSON encoding of Go type " + t.String()}, nil
	case implements(t, textMarshalerType):
		return &Schema{Type: Types{"string"}}, nil
	}
	switch t.Kind() {
	case reflect.Bool:
		return &Schema{Type: Types{"boolean"}}, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		s := &Schema{Type: Types{"integer"}}
		if t == durationType {
			s.Description = "a duration in nanoseconds"
		}
		return s, nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		zero := int64(0)
		return &Schema{Type: Types{"integer"}, Minimum: &zero}, nil
	case reflect.Float32, reflect.Float64:
		return &Schema{Type: Types{"number"}}, nil
	case reflect.String:
		return &Schema{Type: Types{"string"}}, nil
	case reflect.Interface:
		return &Schema{}, nil
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 && !implements(t.Elem(), jsonMarshalerType) && !implements(t.Elem(), textMarshalerType) {
			return &Schema{Type: Types{"string", "null"}, ContentEncoding: "base64"}, nil
		}
		items, err := r.schemaOf(t.Elem())
		if err != nil {
			return nil, err
		}
		return &Schema{Type: Types{"array", "null"}, Items: items}, nil
	case reflect.Array:
		items, err := r.schemaOf(t.Elem())
		if err != nil {
			return nil, err
		}
		n := t.Len()
		return &Schema{Type: Types{"array"}, Items: items, MinItems: &n, MaxItems: &n}, nil
	case reflect.Map:
		return r.mapSchema(t)
	case reflect.Struct:
		if t.Name() == "" {
			return r.structSchema(t)
		}
		return r.ref(t)
	}
	return nil, fmt.Errorf("%v: %w", t, ErrUnsupported)
}

// implements reports whether t or *t implements iface: encoding/json uses
// pointer methods of addressable values, which payload fields are.
func implements(t, iface reflect.Type) bool {
	return t.Implements(iface) || (t.Kind() != reflect.Pointer && reflect.PointerTo(t).Implements(iface))
}

func (r *reflector) mapSchema(t reflect.Type) (*Schema, error) {
	values, err := r.schemaOf(t.Elem())
	if err != nil {
		return nil, err
	}
	s := &Schema{Type: Types{"object", "null"}, AdditionalProperties: values}
	k := t.Key()
	switch {
	case k.Kind() == reflect.String:
	case implements(k, textMarshalerType):
	case k.Kind() >= reflect.Int && k.Kind() <= reflect.Int64:
		s.PropertyNames = &Schema{Pattern: `^-?[0-9]+$`}
	case k.Kind() >= reflect.Uint && k.Kind() <= reflect.Uintptr:
		s.PropertyNames = &Schema{Pattern: `^[0-9]+$`}
	default:
		return nil, fmt.Errorf("%v (map key %v): %w", t, k, ErrUnsupported)
	}
	return s, nil
}

// ref puts the named struct type t in defs (once) and returns a $ref to it.
func (r *reflector) ref(t reflect.Type) (*Schema, error) {
	name, ok := r.names[t]
	if !ok {
		name = r.defName(t)
		r.names[t] = name
		r.defs[name] = &Schema{} // placeholder: a recursive reference stops here
		s, err := r.structSchema(t)
		if err != nil {
			return nil, err
		}
		r.defs[name] = s
	}
	return &Schema{Ref: "#/$defs/" + name}, nil
}

// defName returns t's name, qualified by its package's when another type
// already holds the short one.
func (r *reflector) defName(t reflect.Type) string {
	clean := strings.NewReplacer("[", "_", "]", "", "/", "_", ".", "_", ",", "_", " ", "", "*", "").Replace
	name := clean(t.Name())
	if _, taken := r.defs[name]; taken {
		name = clean(path.Base(t.PkgPath())) + "_" + name
	}
	for base, i := name, 2; ; i++ {
		if _, taken := r.defs[name]; !taken {
			return name
		}
		name = fmt.Sprintf("%s_%d", base, i)
	}
}

// structSchema returns an object schema with t's JSON fields.
func (r *reflector) structSchema(t reflect.Type) (*Schema, error) {
	s := &Schema{Type: Types{"object"}, AdditionalProperties: false}
	for _, f := range jsonFields(t) {
		var fs *Schema
		if f.quoted {
			fs = &Schema{Type: Types{"string"}}
			if f.typ.Kind() == reflect.Pointer {
				fs = nullable(fs)
			}
		} else {
			var err error
			if fs, err = r.schemaOf(f.typ); err != nil {
				return nil, fmt.Errorf("%v.%s: %w", t, f.goName, err)
			}
		}
		s.Properties = append(s.Properties, Property{Name: f.name, Schema: fs})
		if !f.optional {
			s.Required = append(s.Required, f.name)
		}
	}
	return s, nil
}

// field is one JSON property of a struct, as encoding/json finds it.
type field struct {
	name   string
	goName string
	tagged bool
	index  []int
	typ    reflect.Type
	// optional is set for omitempty/omitzero fields that can be omitted,
	// and for fields promoted through an embedded pointer (omitted when it
	// is nil).
	optional bool
	quoted   bool // the ,string option
}

// jsonFields returns the fields encoding/json encodes for struct type t, in
// its order: exported fields, json tags, promoted fields of embedded
// structs, and Go's rules for names several fields claim (the shallowest
// wins, then a tagged one; a tie drops them all).
func jsonFields(t reflect.Type) []field {
	type walk struct {
		typ    reflect.Type
		index  []int
		viaPtr bool
	}
	var fields []field
	next := []walk{{typ: t}}
	count, nextCount := map[reflect.Type]int{}, map[reflect.Type]int{}
	visited := map[reflect.Type]bool{}
	for len(next) > 0 {
		current := next
		next = nil
		count, nextCount = nextCount, map[reflect.Type]int{}
		for _, w := range current {
			if visited[w.typ] {
				continue
			}
			visited[w.typ] = true
			for i := range w.typ.NumField() {
				sf := w.typ.Field(i)
				if sf.Anonymous {
					ft := sf.Type
					if ft.Kind() == reflect.Pointer {
						ft = ft.Elem()
					}
					if !sf.IsExported() && ft.Kind() != reflect.Struct {
						continue
					}
				} else if !sf.IsExported() {
					continue
				}
				tag := sf.Tag.Get("json")
				if tag == "-" {
					continue
				}
				name, opts, _ := strings.Cut(tag, ",")
				if !validTagName(name) {
					name = ""
				}
				index := append(slices.Clone(w.index), i)
				ft := sf.Type
				if ft.Name() == "" && ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if name != "" || !sf.Anonymous || ft.Kind() != reflect.Struct {
					f := field{name: name, goName: sf.Name, tagged: name != "", index: index, typ: sf.Type}
					if f.name == "" {
						f.name = sf.Name
					}
					f.optional = w.viaPtr || hasOpt(opts, "omitzero") || hasOpt(opts, "omitempty") && omittable(sf.Type)
					if hasOpt(opts, "string") {
						switch ft.Kind() {
						case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
							reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
							reflect.Float32, reflect.Float64, reflect.String:
							f.quoted = true
						}
					}
					fields = append(fields, f)
					if count[w.typ] > 1 {
						// Two embeddings of one type at one depth: the
						// duplicate annihilates both below.
						fields = append(fields, f)
					}
					continue
				}
				nextCount[ft]++
				if nextCount[ft] == 1 {
					next = append(next, walk{typ: ft, index: index, viaPtr: w.viaPtr || sf.Type.Kind() == reflect.Pointer})
				}
			}
		}
	}
	slices.SortStableFunc(fields, func(a, b field) int {
		if c := strings.Compare(a.name, b.name); c != 0 {
			return c
		}
		if c := len(a.index) - len(b.index); c != 0 {
			return c
		}
		if a.tagged != b.tagged {
			if a.tagged {
				return -1
			}
			return 1
		}
		return slices.Compare(a.index, b.index)
	})
	var out []field
	for i := 0; i < len(fields); {
		j := i + 1
		for j < len(fields) && fields[j].name == fields[i].name {
			j++
		}
		if f, ok := dominant(fields[i:j]); ok {
			out = append(out, f)
		}
		i = j
	}
	slices.SortFunc(out, func(a, b field) int { return slices.Compare(a.index, b.index) })
	return out
}

// dominant picks the field encoding/json keeps among fields sharing one
// name, sorted by depth then tag: the only shallowest one, or the only
// tagged one among the shallowest.
func dominant(fs []field) (field, bool) {
	if len(fs) > 1 && len(fs[0].index) == len(fs[1].index) && fs[0].tagged == fs[1].tagged {
		return field{}, false
	}
	return fs[0], true
}

// omittable reports whether omitempty can omit a value of type t
// (encoding/json never treats a struct as empty).
func omittable(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Struct:
		return false
	case reflect.Array:
		return t.Len() == 0
	}
	return true
}

func hasOpt(opts, want string) bool {
	for o := range strings.SplitSeq(opts, ",") {
		if o == want {
			return true
		}
	}
	return false
}

// validTagName mirrors encoding/json's isValidTag.
func validTagName(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		switch {
		case strings.ContainsRune("!#$%&()*+-./:;<=>?@[]^_{|}~ ", c):
		case !unicode.IsLetter(c) && !unicode.IsDigit(c):
			return false
		}
	}
	return true
}
