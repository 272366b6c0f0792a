package eventstest

import "github.com/ordoplane/ordo/events"

// capacitySamples returns a sample of every capacity on demand event type.
func capacitySamples() map[string]events.Payload {
	return map[string]events.Payload{
		"CapacityRequested": &events.CapacityRequested{RequestID: "2TzMX6QwYSRWVAlRWX2zTqU0sRq", Pool: "batch", Label: "ubuntu-small",
			Evals: []string{"1e43c144-223b-22a9-5aad-9202637615b8", "5013c6fa-e9a3-b2f3-7e3f-2c7c4d3b7cb6"}, Placements: 3, Supply: 1},
	}
}
