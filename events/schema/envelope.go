package schema

import (
	"fmt"
	"reflect"
	"time"

	"github.com/ordoplane/ordo/events"
)

// Record is the JSON record of one event as a consumer receives it, in
// the event stream's shape (commands/httpapi's Event, which a test there
// keeps alike). The Kafka mirror's JSON records carry the same fields less
// Namespace and FilterKeys, always with Keys; the envelope schema requires
// only what both write.
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

// recordRequired are the fields every record has, from the stream or the mirror.
var recordRequired = []string{"Topic", "Type", "Key", "Index", "Payload", "Seq", "Version", "ID", "Time"}

// recordDocs describes each field of Record.
var recordDocs = map[string]string{
	"Topic": "The type's topic (Namespace, Job, Node, …), as Nomad's event stream names it.",
	"Type":  "The event type; its payload schema is `ordo events schema <Type>`.",
	"Key": "The entity the record is about: in the event stream the first entity key's value (Nomad's Key), " +
		"in the Kafka mirror the most specific entity, which is also the Kafka record key.",
	"Namespace": "Event stream only: the value of the event's namespace key, or empty.",
	"FilterKeys": "Event stream only: the values of the entity keys after the first (Nomad's FilterKeys); " +
		"null when there are none.",
	"Index": "The raft index of the entry the event committed in; records of one entity come in index order.",
	"Payload": "The payload, upcast to the type's current version and with sensitive fields replaced by \"" +
		events.RedactedValue + "\": it follows the schema of its Type.",
	"Seq": "The event's position within its entry (0-based): (Index, Seq) identifies an event.",
	"Version": "A version of the type: the event stream gives the version the event was written at, " +
		"the Kafka mirror the current one. Either way the Payload has the current version's shape.",
	"ID":    "The event's id, a ksuid minted by the leader.",
	"Time":  "The leader's time when the command was decided, RFC 3339 in UTC.",
	"Actor": "Who issued the command (a token accessor, system:leader, …); absent when anonymous.",
	"CorrelationID": "The id of the command that appended the event; every event of one entry has the same. " +
		"Absent when the command had none.",
	"Keys": "The entities the event touches, {Kind, Value} pairs such as {namespace, payments}. " +
		"The event stream leaves it out when there are none; the Kafka mirror writes [].",
}

// Envelope returns the schema of the JSON record carrying one event.
func Envelope() *Schema {
	r := newReflector()
	s, err := r.structSchema(reflect.TypeFor[Record]())
	if err != nil {
		panic(fmt.Sprintf("schema: envelope: %v", err)) // Record is a fixed, encodable type
	}
	for i, p := range s.Properties {
		if p.Name == "Payload" {
			s.Properties[i].Schema = &Schema{Type: Types{"object"}}
		}
		s.Properties[i].Schema.Description = recordDocs[p.Name]
	}
	s.Required = recordRequired
	s.Schema = Draft
	s.Title = "ordo event record"
	s.Description = "One event as the log's stream (/v1/operator/log/stream) and the Kafka mirror's JSON records " +
		"carry it: the envelope, and the payload as the schema of its Type describes it."
	s.Defs = r.defs
	return s
}
