package eventstest

import "github.com/ordoplane/ordo/events"

// nodePoolSamples are the node pool and scheduler configuration samples.
func nodePoolSamples() map[string]events.Payload {
	return map[string]events.Payload{
		"NodePoolUpserted": &events.NodePoolUpserted{Pool: events.NodePool{Name: "gpu",
			Description: "machines with a GPU", Meta: map[string]string{"team": "ml"}}},
		"NodePoolDeleted": &events.NodePoolDeleted{Name: "gpu"},
		"SchedulerConfigUpdated": &events.SchedulerConfigUpdated{Config: events.SchedulerConfig{Algorithm: "spread",
			PreemptSystem: true, PreemptSysBatch: true, PreemptBatch: true, PreemptService: true,
			MemoryOversubscription: true, RejectJobRegistration: true, PauseEvalBroker: true}},
	}
}
