package eventstest

import "github.com/ordoplane/ordo/events"

// jobScalingSamples are samples of the job scaling and stability events
// (every field set, for the codec fixtures).
func jobScalingSamples() map[string]events.Payload {
	count := int64(5)
	return map[string]events.Payload{
		"JobScaled": &events.JobScaled{Namespace: "payments", JobID: "web", Group: "frontend",
			Event: events.ScalingEvent{Count: &count, PreviousCount: 3, Error: true, Message: "scaled by the autoscaler",
				Meta: events.TaskConfig{"policy": "cpu"}, EvalID: "2TzMXBk0cVVR4x3Q3b7W0qUKn0T",
				Time: 1764597720000000000}},
		"JobStabilityUpdated": &events.JobStabilityUpdated{Namespace: "payments", ID: "web", Version: 2, Stable: true},
	}
}
