package api

// ServerMembers is the answer of GET /v1/agent/members (Nomad's
// api.ServerMembers): the servers of the raft configuration.
type ServerMembers struct {
	ServerName   string
	ServerRegion string
	ServerDC     string
	Members      []*AgentMember
}

// AgentMember is one server as /v1/agent/members and /v1/agent/self show
// it (Nomad's api.AgentMember). Addr and Port are the server's HTTP
// address; Tags carry its raft id, raft address and role.
type AgentMember struct {
	Name        string
	Addr        string
	Port        uint16
	Tags        map[string]string
	Status      string
	ProtocolMin uint8
	ProtocolMax uint8
	ProtocolCur uint8
	DelegateMin uint8
	DelegateMax uint8
	DelegateCur uint8
}

// NodePool is a node pool as GET /v1/node/pool/:name answers it and
// PUT /v1/node/pools takes it (Nomad's api.NodePool without its
// Enterprise scheduler configuration).
type NodePool struct {
	Name        string
	Description string
	Meta        map[string]string
	CreateIndex uint64
	ModifyIndex uint64
}

// SchedulerConfiguration is the cluster's scheduler configuration (Nomad's
// api.SchedulerConfiguration), the body of
// PUT /v1/operator/scheduler/configuration.
type SchedulerConfiguration struct {
	// SchedulerAlgorithm is "binpack" or "spread".
	SchedulerAlgorithm            string
	PreemptionConfig              PreemptionConfig
	MemoryOversubscriptionEnabled bool
	// RejectJobRegistration refuses job registrations except with a
	// management token (and all of them with ACLs disabled).
	RejectJobRegistration bool
	// PauseEvalBroker stops the leader handing evaluations to schedulers.
	PauseEvalBroker bool
	CreateIndex     uint64
	ModifyIndex     uint64
}

// PreemptionConfig says which schedulers may preempt (Nomad's).
type PreemptionConfig struct {
	SystemSchedulerEnabled   bool
	SysBatchSchedulerEnabled bool
	BatchSchedulerEnabled    bool
	ServiceSchedulerEnabled  bool
}

// SchedulerConfigurationResponse is the answer of
// GET /v1/operator/scheduler/configuration.
type SchedulerConfigurationResponse struct {
	SchedulerConfig *SchedulerConfiguration
	Index           uint64
	KnownLeader     bool
}

// SchedulerSetConfigurationResponse is the answer of
// PUT /v1/operator/scheduler/configuration: Updated is false when a ?cas
// write lost to another.
type SchedulerSetConfigurationResponse struct {
	Updated bool
	Index   uint64
}

// AutopilotConfiguration is the autopilot's settings (Nomad's
// api.AutopilotConfiguration), durations as Go duration strings.
type AutopilotConfiguration struct {
	CleanupDeadServers      bool
	LastContactThreshold    string
	MaxTrailingLogs         uint64
	MinQuorum               uint
	ServerStabilizationTime string
	EnableRedundancyZones   bool
	DisableUpgradeMigration bool
	EnableCustomUpgrades    bool
	// DeadServerLastContactThreshold is ordo's own: how long a server
	// goes unanswered before CleanupDeadServers counts it dead.
	DeadServerLastContactThreshold string `json:",omitempty"`
	CreateIndex                    uint64
	ModifyIndex                    uint64
}

// MetricsSummary is the answer of GET /v1/metrics without
// ?format=prometheus (Nomad's api.MetricsSummary).
type MetricsSummary struct {
	Timestamp string
	Gauges    []GaugeValue
	Points    []PointValue
	Counters  []SampledValue
	Samples   []SampledValue
}

// GaugeValue is one gauge of a MetricsSummary.
type GaugeValue struct {
	Name   string
	Value  float32
	Labels map[string]string
}

// PointValue is one series of points of a MetricsSummary (ordo has none).
type PointValue struct {
	Name   string
	Points []float32
}

// SampledValue is one counter or distribution of a MetricsSummary.
type SampledValue struct {
	Name   string
	Count  int
	Rate   float64
	Sum    float64
	Min    float64
	Max    float64
	Mean   float64
	Stddev float64
	Labels map[string]string
}
