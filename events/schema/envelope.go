package schema

import (
	"fmt"
	"reflect"
	"time"

	"github.com/ordoplane/ordo/events"
)

// Record is the JSON record of one event as a consumer receives it: the
// event stream's Event (commands/httpapi), which the Kafka mirror's JSON
// records follow too. A test in commands/httpapi keeps the two alike.
type Record struct {
	Topic         string
	Type          string
	Key           string
	Namespace     string
	FilterKeys    []string
	Index         uint64
	Payload       map[string]any
	Seq           uint32
	Version       uint16
	ID            string
	Time          time.Time
	Actor         string       `json:",omitempty"`
	CorrelationID string       `json:",omitempty"`
	Keys          []events.Key `json:",omitempty"`
}

// recordDocs describes each field of Record.
var recordDocs = map[string]string{
	"Topic":     "The type's topic (Namespace, Job, Node, …), as Nomad's event stream names it.",
	"Type":      "The event type; its payload schema is `ordo events schema <Type>`.",
	"Key":       "The value of the first entity key, or empty when the event has none.",
	"Namespace": "The value of the event's namespace key, or empty.",
	"FilterKeys": "The values of the entity keys after the first (Nomad's FilterKeys); " +
		"null when there are none.",
	"Index": "The raft index of the entry the event committed in; records of one entity come in index order.",
	"Payload": "The payload, upcast to the type's current version and with sensitive fields replaced by \"" +
		events.RedactedValue + "\": it follows the schema of its Type.",
	"Seq":     "The event's position within its entry (0-based): (Index, Seq) identifies an event.",
	"Version": "The version the event was written at. The Payload always has the current version's shape.",
	"ID":      "The event's id, a ksuid minted by the leader.",
	"Time":    "The leader's time when the command was decided, RFC 3339 in UTC.",
	"Actor":   "Who issued the command (a token accessor, system:leader, …); absent when anonymous.",
	"CorrelationID": "The id of the command that appended the event; every event of one entry has the same. " +
		"Absent when the command had none.",
	"Keys": "The entities the event touches, {Kind, Value} pairs such as {namespace, payments}; absent when none.",
}

// Envelope returns the schema of Record, the JSON record carrying one event.
func Envelope() *Schema {
	s, err := EnvelopeOf(reflect.TypeFor[Record]())
	if err != nil {
		panic(fmt.Sprintf("schema: envelope: %v", err)) // Record is a fixed, encodable type
	}
	return s
}

// EnvelopeOf returns the envelope schema generated from t, a struct type of
// Record's shape, with Payload as any JSON object and Record's field
// descriptions. The API's tests call it with their own Event type to prove
// it is the record Envelope describes.
func EnvelopeOf(t reflect.Type) (*Schema, error) {
	r := newReflector()
	s, err := r.structSchema(t)
	if err != nil {
		return nil, fmt.Errorf("envelope schema of %v: %w", t, err)
	}
	for i, p := range s.Properties {
		if p.Name == "Payload" {
			s.Properties[i].Schema = &Schema{Type: Types{"object"}}
		}
		s.Properties[i].Schema.Description = recordDocs[p.Name]
	}
	s.Schema = Draft
	s.Title = "ordo event record"
	s.Description = "One event as the event stream (/v1/event/stream) and the Kafka mirror's JSON records " +
		"carry it: the envelope, and the payload as the schema of its Type describes it."
	if len(r.defs) > 0 {
		s.Defs = r.defs
	}
	return s, nil
}
