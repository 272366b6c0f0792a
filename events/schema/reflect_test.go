package schema_test

import (
	"encoding/json"
	"maps"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/events/schema"
)

type Inner struct {
	Deep  string
	Clash string `json:"Shared"`
}

type PtrInner struct {
	ViaPtr int
}

type other struct {
	Shared string // loses to Inner's tagged Shared at the same depth
}

type Tree struct {
	Name     string
	Children []*Tree
}

// rules exercises encoding/json's rules the generator follows.
type rules struct {
	Inner     // promoted: Deep, Shared
	*PtrInner // promoted through a pointer: ViaPtr, optional
	other     // unexported embedded struct: its fields still promote

	Plain      string
	Renamed    string `json:"renamed"`
	Omitted    string `json:"omitted,omitempty"`
	Zero       int    `json:",omitzero"`
	Skipped    string `json:"-"`
	Dash       string `json:"-,"`
	Quoted     int64  `json:",string"`
	unexported string
	Struct     Inner `json:",omitempty"` // omitempty never omits a struct
	Ptr        *Inner
	Bytes      []byte
	When       time.Time
	Wait       time.Duration
	ByID       map[int]string
	Set        map[string]bool
	Any        any
	Fixed      [2]uint8
	Anon       struct{ A, B int }
	Tree       Tree
	IP         net.IP // a TextMarshaler
	Raw        json.RawMessage
}

func (r *rules) EntityKeys() []events.Key { return nil }

var rulesType = events.Type{Name: "RulesTested", Version: 1, Topic: "Test",
	New: func() events.Payload { return new(rules) }}

// TestJSONRules checks the generator against encoding/json itself: the
// properties are the keys json.Marshal writes for a payload with every
// field set, the required ones are among the keys it writes for the zero
// payload, and both validate.
func TestJSONRules(t *testing.T) {
	s, err := schema.ForType(rulesType, 1)
	if err != nil {
		t.Fatal(err)
	}
	sch := compile(t, s)
	var props []string
	for _, p := range s.Properties {
		props = append(props, p.Name)
	}
	wantProps := []string{"Deep", "Shared", "ViaPtr", "Plain", "renamed", "omitted", "Zero", "-", "Quoted",
		"Struct", "Ptr", "Bytes", "When", "Wait", "ByID", "Set", "Any", "Fixed", "Anon", "Tree", "IP", "Raw"}
	if !slices.Equal(props, wantProps) {
		t.Errorf("properties\n %v\nwant\n %v", props, wantProps)
	}
	for _, optional := range []string{"ViaPtr", "omitted", "Zero"} {
		if slices.Contains(s.Required, optional) {
			t.Errorf("%s is required", optional)
		}
	}
	if !slices.Contains(s.Required, "Struct") {
		t.Error("Struct (omitempty on a struct) is not required")
	}

	filled, err := schema.Filled(rulesType)
	if err != nil {
		t.Fatal(err)
	}
	filled.(*rules).Raw = json.RawMessage(`{"free":"form"}`)
	filled.(*rules).IP = net.IPv4(10, 0, 0, 1)
	fb, err := json.Marshal(filled)
	if err != nil {
		t.Fatal(err)
	}
	var fm map[string]any
	_ = json.Unmarshal(fb, &fm)
	if got := slices.Sorted(maps.Keys(fm)); !slices.Equal(got, slices.Sorted(slices.Values(wantProps))) {
		t.Errorf("json.Marshal writes %v", got)
	}
	if err := validate(t, sch, fb); err != nil {
		t.Errorf("filled: %v\n%s", err, fb)
	}

	zb, _ := json.Marshal(new(rules))
	var zm map[string]any
	_ = json.Unmarshal(zb, &zm)
	for _, r := range s.Required {
		if _, ok := zm[r]; !ok {
			t.Errorf("required %s absent from the zero payload's JSON %s", r, zb)
		}
	}
	if err := validate(t, sch, zb); err != nil {
		t.Errorf("zero: %v\n%s", err, zb)
	}

	// Types read as encoding/json writes them.
	for name, want := range map[string]string{
		"Quoted": "string", "Bytes": "string (base64) or null", "When": "string (date-time)",
		"Wait": "integer (ns)", "ByID": "object of string or null", "Ptr": "Inner or null",
		"Fixed": "array of integer", "Any": "any", "IP": "string", "Tree": "Tree",
	} {
		if got := schema.Describe(s.Properties.Get(name)); got != want {
			t.Errorf("%s reads %q, want %q", name, got, want)
		}
	}
	if p := s.Properties.Get("ByID"); p.PropertyNames == nil || p.PropertyNames.Pattern == "" {
		t.Error("integer map keys have no pattern")
	}
	// A recursive type refers to itself.
	if tree := s.Defs["Tree"]; tree == nil || schema.Describe(tree.Properties.Get("Children")) != "array of (Tree or null) or null" {
		t.Errorf("Tree def: %+v", tree)
	}
}

func TestUnsupportedTypes(t *testing.T) {
	typ := events.Type{Name: "ChanTested", Version: 1, Topic: "Test",
		New: func() events.Payload { return new(badPayload) }}
	if _, err := schema.ForType(typ, 1); err == nil {
		t.Fatal("a channel field got a schema")
	}
}

type badPayload struct{ C chan int }

func (*badPayload) EntityKeys() []events.Key { return nil }
