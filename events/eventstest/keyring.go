package eventstest

import "github.com/ordoplane/ordo/events"

// keyringSamples returns a sample of every root key event type.
func keyringSamples() map[string]events.Payload {
	return map[string]events.Payload{
		"RootKeyUpserted": &events.RootKeyUpserted{Key: events.RootKeyMeta{KeyID: "2TzMX6QwYSRWVAlRWX2zTqU0sRq",
			Algorithm: events.RootKeyAlgorithm, State: events.RootKeyActive,
			CreateTime: 1700000000000000000, PublishTime: 1700000000000000000}},
		"RootKeyDeleted": &events.RootKeyDeleted{KeyID: "2TzMX6QwYSRWVAlRWX2zTqU0sRq"},
	}
}
