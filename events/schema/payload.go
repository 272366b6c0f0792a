package schema

import (
	"fmt"
	"reflect"
	"slices"

	"github.com/ordoplane/ordo/events"
)

// Lookup returns the schema of the registered type called name at
// version; version 0 means the type's current version. An unknown name
// wraps events.ErrUnknownType, a version the type never had
// ErrUnknownVersion.
func Lookup(name string, version uint16) (*Schema, error) {
	typ, ok := events.Lookup(name)
	if !ok {
		return nil, fmt.Errorf("event type %q: %w", name, events.ErrUnknownType)
	}
	if version == 0 {
		version = typ.Version
	}
	return ForType(typ, version)
}

// ForType returns the schema of typ's payload for events written at
// version, which must be between 1 and typ.Version. typ need not be
// registered. Every version's schema describes the current payload, since
// readers outside the cluster only ever see events upcast to it; an older
// version's says so in its description.
func ForType(typ events.Type, version uint16) (*Schema, error) {
	if version == 0 || version > typ.Version {
		return nil, fmt.Errorf("%s v%d (versions 1 to %d): %w", typ.Name, version, typ.Version, ErrUnknownVersion)
	}
	if typ.New == nil {
		return nil, fmt.Errorf("%s: no payload constructor", typ.Name)
	}
	t := reflect.TypeOf(typ.New())
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	r := newReflector()
	var s *Schema
	var err error
	if t.Kind() == reflect.Struct {
		s, err = r.structSchema(t) // the payload itself inline; nested types in $defs
	} else {
		s, err = r.schemaOf(t)
	}
	if err != nil {
		return nil, fmt.Errorf("schema of %s payload: %w", typ.Name, err)
	}
	if err := markSensitive(s, typ); err != nil {
		return nil, err
	}
	s.Schema = Draft
	s.Title = fmt.Sprintf("%s v%d", typ.Name, version)
	s.EventType, s.Topic, s.Version, s.PayloadVersion = typ.Name, typ.Topic, version, typ.Version
	s.Versions = versions(typ)
	s.Description = fmt.Sprintf("The payload of a %s event (topic %s) as it leaves the cluster: "+
		"the JSON encoding of the version %d payload", typ.Name, typ.Topic, typ.Version)
	if len(typ.Sensitive) > 0 {
		s.Description += fmt.Sprintf(", with its sensitive fields replaced by %q", events.RedactedValue)
	}
	s.Description += "."
	if version < typ.Version {
		s.Description += fmt.Sprintf(" Events written at version %d are upcast to version %d when read, "+
			"so their payload has the version %d shape; the record's Version still says %d.",
			version, typ.Version, typ.Version, version)
	}
	if len(r.defs) > 0 {
		s.Defs = r.defs
	}
	return s, nil
}

// markSensitive replaces the schema of each of typ's sensitive fields with
// the redacted form that leaves the cluster.
func markSensitive(s *Schema, typ events.Type) error {
	for _, name := range typ.Sensitive {
		i := slices.IndexFunc(s.Properties, func(p Property) bool { return p.Name == name })
		if i < 0 {
			return fmt.Errorf("%s: sensitive field %q is not a JSON field of its payload", typ.Name, name)
		}
		redacted := events.RedactedValue
		s.Properties[i].Schema = &Schema{
			Description: fmt.Sprintf("Sensitive: never leaves the cluster in clear; the event stream, "+
				"the operator log and the Kafka mirror replace its value (%s) with %q.",
				Describe(s.Properties[i].Schema), redacted),
			Const:     &redacted,
			Sensitive: true,
		}
		s.SensitiveFields = append(s.SensitiveFields, name)
	}
	return nil
}

// versions returns 1 to typ.Version: a type starts at 1 and every older
// version has an upcaster to the next (events.Upcast refuses a gap).
func versions(typ events.Type) []uint16 {
	out := make([]uint16, 0, typ.Version)
	for v := uint16(1); v <= typ.Version; v++ {
		out = append(out, v)
	}
	return out
}
