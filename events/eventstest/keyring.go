package eventstest

import "github.com/ordoplane/ordo/events"

// keyringSamples returns a sample of every root key event type.
func keyringSamples() map[string]events.Payload {
	return map[string]events.Payload{
		"RootKeyUpserted": &events.RootKeyUpserted{Key: events.RootKeyMeta{KeyID: "2TzMX6QwYSRWVAlRWX2zTqU0sRq",
			Algorithm: events.RootKeyAlgorithm, State: events.RootKeyActive,
			CreateTime: 1700000000000000000, PublishTime: 1700000000000000000,
			PublicKey: []byte{0x3d, 0x40, 0x17, 0xc3, 0xe8, 0x43, 0x89, 0x5a, 0x92, 0xb7, 0x0a, 0xa7, 0x4d, 0x1b, 0x7e, 0xbc,
				0x9c, 0x98, 0x2c, 0xcf, 0x2e, 0xc4, 0x96, 0x8c, 0xc0, 0xcd, 0x55, 0xf1, 0x2a, 0xf4, 0x66, 0x0c}}},
		"RootKeyDeleted": &events.RootKeyDeleted{KeyID: "2TzMX6QwYSRWVAlRWX2zTqU0sRq"},
	}
}
