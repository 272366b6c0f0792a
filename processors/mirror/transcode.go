package mirror

import (
	"bytes"
	"encoding"
	"encoding/base64"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/ordoplane/ordo/events"
)

// A payload's JSON is what encoding/json writes for the payload decoded
// from its msgpack bytes. For the payload types made of plain parts
// (structs, strings, integers, bools, byte slices, slices, string-keyed
// maps and pointers of them) a plan compiled once from the Go type writes
// that JSON straight from the msgpack bytes, without decoding them into
// Go values: the record fast path (rawrecord.go). A type with anything
// else (a float, an interface, a custom JSON or msgpack codec that is not
// known to write what reflection writes, a field tag option but
// omitempty) has no plan, and a value the plan cannot follow (a form the
// encoder does not write, fields out of order, a map's keys unsorted)
// makes the transcoding fail: the record is then built the general way.
// TestTranscodeMatchesEncodingJSON holds the two to the same bytes.

// planKind is what a plan node writes.
type planKind uint8

const (
	planString planKind = iota
	planBool
	planInt
	planUint
	planBytes
	planSlice
	planMap
	planPtr
	planStruct
)

// planNode writes the JSON of one Go type from its msgpack encoding.
type planNode struct {
	kind   planKind
	bits   int         // planInt, planUint: the Go type's size
	elem   *planNode   // planSlice, planMap (the values'), planPtr
	fields []planField // planStruct, in the Go type's order
	// zero is the JSON of the type's zero value: what a field absent from
	// the msgpack map decodes to.
	zero []byte
}

// planField is one field of a struct's JSON.
type planField struct {
	// msgpack is the field's name in the msgpack map, "" for a field
	// never encoded (tagged "-").
	msgpack string
	// name is the JSON field name, quoted, with the colon.
	name      []byte
	omitEmpty bool
	node      *planNode
	// zeroOut is what the field writes when absent: name and zero, or
	// nothing if omitempty leaves out the zero value.
	zeroOut []byte
}

// reflectionEquivalent are the types whose own msgpack codecs write and
// read exactly what reflection does (the events package's fast codecs;
// its fuzz tests hold them to it), so a plan may follow their bytes as
// reflection's.
var reflectionEquivalent = map[reflect.Type]bool{
	reflect.TypeFor[events.Allocation]():          true,
	reflect.TypeFor[events.AllocClientUpdate]():   true,
	reflect.TypeFor[events.AllocsClientUpdated](): true,
	reflect.TypeFor[events.AllocsPlaced]():        true,
	reflect.TypeFor[events.EvalsUpserted]():       true,
	reflect.TypeFor[events.Evaluation]():          true,
	reflect.TypeFor[events.TaskState]():           true,
	reflect.TypeFor[events.Job]():                 true,
	reflect.TypeFor[events.JobRegistered]():       true,
}

var (
	jsonCodecs = []reflect.Type{
		reflect.TypeFor[json.Marshaler](), reflect.TypeFor[encoding.TextMarshaler](),
	}
	msgpackCodecs = []reflect.Type{
		reflect.TypeFor[msgpack.CustomEncoder](), reflect.TypeFor[msgpack.CustomDecoder](),
		reflect.TypeFor[msgpack.Marshaler](), reflect.TypeFor[msgpack.Unmarshaler](),
		reflect.TypeFor[encoding.BinaryMarshaler](), reflect.TypeFor[encoding.BinaryUnmarshaler](),
		reflect.TypeFor[encoding.TextUnmarshaler](),
	}
)

// implementsAny reports whether t or *t implements one of ifaces.
func implementsAny(t reflect.Type, ifaces []reflect.Type) bool {
	for _, i := range ifaces {
		if t.Implements(i) || reflect.PointerTo(t).Implements(i) {
			return true
		}
	}
	return false
}

// compilePlan returns the plan of payload type t (a struct), or nil if
// it has none.
func compilePlan(t reflect.Type) *planNode {
	c := planCompiler{seen: map[reflect.Type]*planNode{}}
	n, ok := c.node(t)
	if !ok || n.kind != planStruct {
		return nil
	}
	return n
}

type planCompiler struct {
	seen map[reflect.Type]*planNode
}

func (c *planCompiler) node(t reflect.Type) (*planNode, bool) {
	if n, ok := c.seen[t]; ok {
		return n, true
	}
	// A pointer type has no methods of its own: its element is checked.
	if t.Kind() != reflect.Pointer &&
		(implementsAny(t, jsonCodecs) || !reflectionEquivalent[t] && implementsAny(t, msgpackCodecs)) {
		return nil, false
	}
	n := &planNode{zero: []byte("null")}
	switch t.Kind() {
	case reflect.String:
		n.kind, n.zero = planString, []byte(`""`)
	case reflect.Bool:
		n.kind, n.zero = planBool, []byte("false")
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n.kind, n.bits, n.zero = planInt, t.Bits(), []byte("0")
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n.kind, n.bits, n.zero = planUint, t.Bits(), []byte("0")
	case reflect.Pointer:
		n.kind = planPtr
		c.seen[t] = n // a type may point to itself
		elem, ok := c.node(t.Elem())
		if !ok {
			return nil, false
		}
		n.elem = elem
	case reflect.Slice:
		if t.Elem() == reflect.TypeFor[byte]() {
			n.kind = planBytes
			break
		}
		if t.Elem().Kind() == reflect.Uint8 {
			return nil, false // a named byte: JSON and msgpack may disagree on it
		}
		n.kind = planSlice
		c.seen[t] = n
		elem, ok := c.node(t.Elem())
		if !ok {
			return nil, false
		}
		n.elem = elem
	case reflect.Map:
		if t.Key().Kind() != reflect.String || implementsAny(t.Key(), jsonCodecs) || implementsAny(t.Key(), msgpackCodecs) {
			return nil, false
		}
		n.kind = planMap
		c.seen[t] = n
		elem, ok := c.node(t.Elem())
		if !ok {
			return nil, false
		}
		n.elem = elem
	case reflect.Struct:
		n.kind = planStruct
		c.seen[t] = n
		if !c.structFields(t, n) {
			return nil, false
		}
	default:
		return nil, false
	}
	c.seen[t] = n
	return n, true
}

// structFields fills n with t's fields as encoding/json orders and names
// them, each with its msgpack name.
func (c *planCompiler) structFields(t reflect.Type, n *planNode) bool {
	jsonNames, msgpackNames := map[string]bool{}, map[string]bool{}
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous {
			return false // both codecs flatten embedded structs, each its own way
		}
		if !f.IsExported() {
			continue
		}
		jsonTag, jsonOpts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if jsonTag == "-" && jsonOpts == "" {
			continue
		}
		if jsonOpts != "" && jsonOpts != "omitempty" {
			return false
		}
		name := cmpOr(jsonTag, f.Name)
		if !plainName(name) || jsonNames[name] {
			return false
		}
		jsonNames[name] = true
		mpTag, mpOpts, _ := strings.Cut(f.Tag.Get("msgpack"), ",")
		if mpOpts != "" && mpOpts != "omitempty" {
			return false
		}
		mpName := cmpOr(mpTag, f.Name)
		if mpTag == "-" {
			mpName = ""
		} else if msgpackNames[mpName] {
			return false
		}
		msgpackNames[mpName] = true
		node, ok := c.node(f.Type)
		if !ok {
			return false
		}
		pf := planField{msgpack: mpName, name: append(appendJSONString(nil, name), ':'), omitEmpty: jsonOpts == "omitempty", node: node}
		n.fields = append(n.fields, pf)
	}
	// Every field's type is compiled now (a struct cannot hold itself but
	// through a pointer, a slice or a map, whose zero is null), so the
	// zero values are known.
	zero := []byte{'{'}
	for i := range n.fields {
		f := &n.fields[i]
		if f.omitEmpty && f.node.kind != planStruct {
			continue // the zero value is empty
		}
		f.zeroOut = append(append([]byte(nil), f.name...), f.node.zero...)
		if len(zero) > 1 {
			zero = append(zero, ',')
		}
		zero = append(zero, f.zeroOut...)
	}
	n.zero = append(zero, '}')
	return true
}

// plainName reports a JSON field name encoding/json takes as it is.
func plainName(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// appendTranscoded appends the JSON of the msgpack value at d as n's Go
// type would encode after decoding it; empty reports a value that
// omitempty leaves out. ok false: the value is not one the plan follows.
func appendTranscoded(dst []byte, d *mpReader, n *planNode, depth int) (out []byte, empty, ok bool) {
	if depth > maxNesting {
		return dst, false, false
	}
	switch n.kind {
	case planString:
		s, _, ok := d.str()
		return appendJSONString(dst, s), len(s) == 0, ok
	case planBool:
		v, ok := d.bool()
		return strconv.AppendBool(dst, v), !v, ok
	case planInt:
		u, ok := d.uint()
		v := int64(u) << (64 - n.bits) >> (64 - n.bits) // as a field of n.bits holds it
		return strconv.AppendInt(dst, v, 10), v == 0, ok
	case planUint:
		v, ok := d.uint()
		v = v << (64 - n.bits) >> (64 - n.bits)
		return strconv.AppendUint(dst, v, 10), v == 0, ok
	case planBytes:
		s, isNil, ok := d.str()
		if isNil || !ok {
			return append(dst, "null"...), true, ok
		}
		dst = append(dst, '"')
		dst = base64.StdEncoding.AppendEncode(dst, s)
		return append(dst, '"'), len(s) == 0, true
	case planPtr:
		if d.nil() {
			return append(dst, "null"...), true, true
		}
		dst, _, ok = appendTranscoded(dst, d, n.elem, depth+1)
		return dst, false, ok
	case planSlice:
		if d.nil() {
			return append(dst, "null"...), true, true
		}
		l, ok := d.arrayLen()
		if !ok {
			return dst, false, false
		}
		dst = append(dst, '[')
		for i := range l {
			if i > 0 {
				dst = append(dst, ',')
			}
			if dst, _, ok = appendTranscoded(dst, d, n.elem, depth+1); !ok {
				return dst, false, false
			}
		}
		return append(dst, ']'), l == 0, true
	case planMap:
		return appendMap(dst, d, n, depth)
	case planStruct:
		return appendStruct(dst, d, n, depth)
	}
	return dst, false, false
}

// appendMap writes a string-keyed map: encoding/json sorts the keys, and
// the archive holds them sorted (events.Marshal), so they are written as
// they come, checked to be in order.
func appendMap(dst []byte, d *mpReader, n *planNode, depth int) ([]byte, bool, bool) {
	if d.nil() {
		return append(dst, "null"...), true, true
	}
	l, ok := d.mapLen()
	if !ok {
		return dst, false, false
	}
	dst = append(dst, '{')
	var prev []byte
	for i := range l {
		k, isNil, ok := d.str()
		if !ok || isNil || i > 0 && bytes.Compare(prev, k) >= 0 {
			return dst, false, false // not a key, or keys out of order or repeated
		}
		prev = k
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(appendJSONString(dst, k), ':')
		if dst, _, ok = appendTranscoded(dst, d, n.elem, depth+1); !ok {
			return dst, false, false
		}
	}
	return append(dst, '}'), l == 0, true
}

// appendStruct writes a struct's fields in the Go type's order, which is
// the order reflection encodes them in: each field present in the map
// from its value, each absent one (omitempty in msgpack) as its zero
// value. A key naming no field is passed over, as the decoder does.
func appendStruct(dst []byte, d *mpReader, n *planNode, depth int) ([]byte, bool, bool) {
	if d.nil() {
		return append(dst, n.zero...), false, true
	}
	l, ok := d.mapLen()
	if !ok {
		return dst, false, false
	}
	dst = append(dst, '{')
	first, next := true, 0
	field := func(f *planField) {
		if f.zeroOut != nil {
			if !first {
				dst = append(dst, ',')
			}
			dst, first = append(dst, f.zeroOut...), false
		}
	}
	for range l {
		k, isNil, ok := d.str()
		if !ok || isNil {
			return dst, false, false
		}
		j := fieldIndex(n.fields, next, k)
		if j < 0 {
			if fieldIndex(n.fields, 0, k) >= 0 {
				return dst, false, false // out of order, or repeated
			}
			if !d.skip() {
				return dst, false, false
			}
			continue
		}
		for i := next; i < j; i++ {
			field(&n.fields[i])
		}
		f := &n.fields[j]
		mark := len(dst)
		if !first {
			dst = append(dst, ',')
		}
		dst = append(dst, f.name...)
		var empty bool
		if dst, empty, ok = appendTranscoded(dst, d, f.node, depth+1); !ok {
			return dst, false, false
		}
		if empty && f.omitEmpty {
			dst = dst[:mark]
		} else {
			first = false
		}
		next = j + 1
	}
	for i := next; i < len(n.fields); i++ {
		field(&n.fields[i])
	}
	return append(dst, '}'), false, true
}

// fieldIndex returns the index, from from on, of the field encoded as k,
// or -1.
func fieldIndex(fields []planField, from int, k []byte) int {
	for i := from; i < len(fields); i++ {
		if fields[i].msgpack != "" && fields[i].msgpack == string(k) {
			return i
		}
	}
	return -1
}
