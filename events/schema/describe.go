package schema

import (
	"strings"
)

// Describe returns a short human reading of s, such as "string",
// "array of Allocation or null" or "object of integer": for listings and
// the description of a redacted field.
func Describe(s *Schema) string {
	switch {
	case s == nil:
		return "any"
	case s.Ref != "":
		return strings.TrimPrefix(s.Ref, "#/$defs/")
	case s.Const != nil:
		return `"` + *s.Const + `"`
	case len(s.AnyOf) > 0:
		parts := make([]string, len(s.AnyOf))
		for i, a := range s.AnyOf {
			parts[i] = Describe(a)
		}
		return strings.Join(parts, " or ")
	case len(s.Type) == 0:
		return "any"
	}
	parts := make([]string, 0, len(s.Type))
	for _, t := range s.Type {
		switch t {
		case "array":
			t = "array of " + group(Describe(s.Items))
		case "object":
			if ap, ok := s.AdditionalProperties.(*Schema); ok && len(s.Properties) == 0 {
				t = "object of " + group(Describe(ap))
			}
		case "string":
			switch {
			case s.Format != "":
				t = "string (" + s.Format + ")"
			case s.ContentEncoding != "":
				t = "string (" + s.ContentEncoding + ")"
			}
		case "integer":
			if s.Description == "a duration in nanoseconds" {
				t = "integer (ns)"
			}
		}
		parts = append(parts, t)
	}
	return strings.Join(parts, " or ")
}

// group parenthesises an alternative so it reads as one element type.
func group(d string) string {
	if strings.Contains(d, " or ") {
		return "(" + d + ")"
	}
	return d
}
