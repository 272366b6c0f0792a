package eventstest

import "github.com/ordoplane/ordo/events"

// variableSamples returns a sample of every variable event type.
func variableSamples() map[string]events.Payload {
	return map[string]events.Payload{
		"VariableUpserted": &events.VariableUpserted{Namespace: "payments", Path: "nomad/jobs/web",
			KeyID: "2TzMX6QwYSRWVAlRWX2zTqU0sRq", Data: []byte("\x8a\x01nonce-and-sealed-items\xff")},
		"VariableDeleted": &events.VariableDeleted{Namespace: "payments", Path: "nomad/jobs/web"},
	}
}
