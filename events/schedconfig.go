package events

// SchedulerConfig is the cluster's scheduler configuration: Nomad's
// SchedulerConfiguration, written by PUT /v1/operator/scheduler/configuration.
type SchedulerConfig struct {
	// Algorithm is "binpack" (the default when empty) or "spread".
	Algorithm string `msgpack:"alg,omitempty" json:"SchedulerAlgorithm"`
	// Preemption per scheduler type; ordo records them, its schedulers do
	// not preempt yet.
	PreemptSystem   bool `msgpack:"psys,omitempty" json:"PreemptSystem"`
	PreemptSysBatch bool `msgpack:"psysb,omitempty" json:"PreemptSysBatch"`
	PreemptBatch    bool `msgpack:"pbatch,omitempty" json:"PreemptBatch"`
	PreemptService  bool `msgpack:"psvc,omitempty" json:"PreemptService"`
	// MemoryOversubscription lets tasks set memory_max above memory.
	MemoryOversubscription bool `msgpack:"memover,omitempty" json:"MemoryOversubscriptionEnabled"`
	// RejectJobRegistration refuses job registrations, except with a
	// management token.
	RejectJobRegistration bool `msgpack:"reject,omitempty" json:"RejectJobRegistration"`
	// PauseEvalBroker stops the leader's eval broker handing out evals.
	PauseEvalBroker bool `msgpack:"pause,omitempty" json:"PauseEvalBroker"`
}

// KindSchedulerConfig is the entity kind of the scheduler configuration,
// a single entity whose key is SchedulerConfigKey.
const KindSchedulerConfig = "schedconfig"

// SchedulerConfigKey is the scheduler configuration's entity key.
const SchedulerConfigKey = "scheduler"

// SchedulerConfigUpdated records the scheduler configuration replaced.
type SchedulerConfigUpdated struct {
	Config SchedulerConfig `msgpack:"cfg" json:"SchedulerConfig"`
}

// EntityKeys implements Payload.
func (p *SchedulerConfigUpdated) EntityKeys() []Key {
	return []Key{{Kind: KindSchedulerConfig, Value: SchedulerConfigKey}}
}

func init() {
	Register(Type{Name: "SchedulerConfigUpdated", Version: 1, Topic: "SchedulerConfig",
		New: func() Payload { return new(SchedulerConfigUpdated) }})
}
