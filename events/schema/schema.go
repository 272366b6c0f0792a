package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Draft is the JSON Schema dialect every generated schema declares.
const Draft = "https://json-schema.org/draft/2020-12/schema"

// Schema is one JSON Schema (draft 2020-12) node, holding the keywords the
// generator uses. The x-ordo-* fields are annotations validators ignore.
// The zero Schema is {}, which accepts any value.
type Schema struct {
	Schema          string     `json:"$schema,omitempty"`
	Ref             string     `json:"$ref,omitempty"`
	Title           string     `json:"title,omitempty"`
	Description     string     `json:"description,omitempty"`
	Type            Types      `json:"type,omitempty"`
	Format          string     `json:"format,omitempty"`
	ContentEncoding string     `json:"contentEncoding,omitempty"`
	Const           *string    `json:"const,omitempty"`
	Minimum         *int64     `json:"minimum,omitempty"`
	Pattern         string     `json:"pattern,omitempty"`
	Properties      Properties `json:"properties,omitempty"`
	Required        []string   `json:"required,omitempty"`
	// AdditionalProperties is nil (any allowed), or a *Schema, or false.
	AdditionalProperties any       `json:"additionalProperties,omitempty"`
	PropertyNames        *Schema   `json:"propertyNames,omitempty"`
	Items                *Schema   `json:"items,omitempty"`
	MinItems             *int      `json:"minItems,omitempty"`
	MaxItems             *int      `json:"maxItems,omitempty"`
	AnyOf                []*Schema `json:"anyOf,omitempty"`

	// EventType, Topic and Version name the event type and the version a
	// payload schema is for; PayloadVersion is the version whose shape
	// the payload has (the current one); Versions lists every version.
	EventType      string   `json:"x-ordo-type,omitempty"`
	Topic          string   `json:"x-ordo-topic,omitempty"`
	Version        uint16   `json:"x-ordo-version,omitempty"`
	PayloadVersion uint16   `json:"x-ordo-payload-version,omitempty"`
	Versions       []uint16 `json:"x-ordo-versions,omitempty"`
	// SensitiveFields lists the payload's sensitive top-level fields;
	// Sensitive marks the schema of one of them.
	SensitiveFields []string `json:"x-ordo-sensitive-fields,omitempty"`
	Sensitive       bool     `json:"x-ordo-sensitive,omitempty"`

	// Defs holds the named struct types the schema refers to with $ref.
	Defs map[string]*Schema `json:"$defs,omitempty"`
}

// Property is one named property of an object schema.
type Property struct {
	Name   string
	Schema *Schema
}

// Properties are an object's properties in the order the Go struct
// declares them; they marshal as a JSON object in that order.
type Properties []Property

// Get returns the schema of the property called name, or nil.
func (ps Properties) Get(name string) *Schema {
	for _, p := range ps {
		if p.Name == name {
			return p.Schema
		}
	}
	return nil
}

// MarshalJSON implements json.Marshaler: an object in declaration order.
func (ps Properties) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, p := range ps {
		if i > 0 {
			b.WriteByte(',')
		}
		if err := encodeCompact(&b, p.Name); err != nil {
			return nil, err
		}
		b.WriteByte(':')
		if err := encodeCompact(&b, p.Schema); err != nil {
			return nil, fmt.Errorf("property %s: %w", p.Name, err)
		}
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// Types is the type keyword: one JSON type marshals as a string, several
// as an array.
type Types []string

// MarshalJSON implements json.Marshaler.
func (ts Types) MarshalJSON() ([]byte, error) {
	if len(ts) == 1 {
		return json.Marshal(ts[0])
	}
	return json.Marshal([]string(ts))
}

// MarshalIndent returns s as indented JSON, without HTML escaping (so
// "<redacted>" reads as written), ending in a newline.
func (s *Schema) MarshalIndent() ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(s); err != nil {
		return nil, fmt.Errorf("marshal schema %s: %w", s.Title, err)
	}
	return b.Bytes(), nil
}

// encodeCompact appends v's JSON to b without HTML escaping or a newline.
func encodeCompact(b *bytes.Buffer, v any) error {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	b.Truncate(b.Len() - 1) // Encode's newline
	return nil
}

// nullable returns s widened to accept null too, as encoding/json writes
// a nil map, slice or pointer.
func nullable(s *Schema) *Schema {
	switch {
	case s.Ref != "" || len(s.AnyOf) > 0:
		return &Schema{AnyOf: []*Schema{s, {Type: Types{"null"}}}}
	case len(s.Type) == 0:
		return s // {} already accepts null
	}
	for _, t := range s.Type {
		if t == "null" {
			return s
		}
	}
	out := *s
	out.Type = append(append(Types(nil), s.Type...), "null")
	return &out
}
