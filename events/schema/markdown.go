package schema

import (
	"bytes"
	_ "embed"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"text/template"

	"github.com/ordoplane/ordo/events"
)

//go:embed events.md.tmpl
var markdownTemplate string

var markdown = template.Must(template.New("events.md").Funcs(template.FuncMap{
	"lower": strings.ToLower,
	"join":  join,
}).Parse(markdownTemplate))

// join renders a list for a table cell: "a, b".
func join(v any) string {
	switch v := v.(type) {
	case []string:
		return strings.Join(v, ", ")
	case []uint16:
		parts := make([]string, len(v))
		for i, n := range v {
			parts[i] = strconv.Itoa(int(n))
		}
		return strings.Join(parts, ", ")
	}
	return fmt.Sprint(v)
}

// docField is one row of a field table.
type docField struct {
	Name     string
	Type     string
	Required bool
}

// docDef is a named nested type and its fields.
type docDef struct {
	Name   string
	Fields []docField
}

// docType is one event type's section.
type docType struct {
	Entry
	Older  []uint16
	Fields []docField
	Defs   []docDef
	JSON   string
}

// Markdown returns docs/events.md: the page's prose from events.md.tmpl,
// the record schema, a table of every registered type and a section per
// type with its fields, the fields of the types it nests and its schema.
func Markdown() ([]byte, error) {
	entries, err := List()
	if err != nil {
		return nil, err
	}
	env, err := Envelope().MarshalIndent()
	if err != nil {
		return nil, err
	}
	data := struct {
		Redacted string
		Envelope string
		Types    []docType
	}{Redacted: events.RedactedValue, Envelope: string(env)}
	for _, e := range entries {
		s, err := Lookup(e.Type, 0)
		if err != nil {
			return nil, err
		}
		js, err := s.MarshalIndent()
		if err != nil {
			return nil, err
		}
		dt := docType{Entry: e, Older: e.Versions[:len(e.Versions)-1], Fields: fieldRows(s), JSON: string(js)}
		names := make([]string, 0, len(s.Defs))
		for name := range s.Defs {
			names = append(names, name)
		}
		slices.Sort(names)
		for _, name := range names {
			dt.Defs = append(dt.Defs, docDef{Name: name, Fields: fieldRows(s.Defs[name])})
		}
		data.Types = append(data.Types, dt)
	}
	var b bytes.Buffer
	if err := markdown.Execute(&b, data); err != nil {
		return nil, fmt.Errorf("render events.md: %w", err)
	}
	return b.Bytes(), nil
}

// fieldRows lists an object schema's properties for a table.
func fieldRows(s *Schema) []docField {
	rows := make([]docField, 0, len(s.Properties))
	for _, p := range s.Properties {
		typ := Describe(p.Schema)
		if p.Schema.Sensitive {
			typ = "sensitive: always `\"" + events.RedactedValue + "\"`"
		}
		rows = append(rows, docField{Name: p.Name, Type: strings.ReplaceAll(typ, "|", `\|`), Required: slices.Contains(s.Required, p.Name)})
	}
	return rows
}
