package api

// The answers of writes that create an evaluation, as Nomad shapes them.

// JobRegisterResponse answers a job register (Nomad's
// api.JobRegisterResponse).
type JobRegisterResponse struct {
	EvalID          string
	EvalCreateIndex uint64
	JobModifyIndex  uint64
	Warnings        string
	Index           uint64
	Duplicate       bool `json:",omitempty"`
}

// JobDeregisterResponse answers a job stop or purge (Nomad's
// api.JobDeregisterResponse).
type JobDeregisterResponse struct {
	EvalID          string
	EvalCreateIndex uint64
	JobModifyIndex  uint64
	Index           uint64
	Duplicate       bool `json:",omitempty"`
}

// JobDispatchResponse answers a parameterized job's dispatch (Nomad's
// api.JobDispatchResponse).
type JobDispatchResponse struct {
	DispatchedJobID string
	EvalID          string
	EvalCreateIndex uint64
	JobCreateIndex  uint64
	Index           uint64
}

// PeriodicForceResponse answers a periodic job's forced launch (Nomad's
// api.PeriodicForceResponse).
type PeriodicForceResponse struct {
	EvalID          string
	EvalCreateIndex uint64
	Index           uint64
	// DispatchedJobID is ordo's: the child launched.
	DispatchedJobID string `json:",omitempty"`
}

// AllocStopResponse answers an allocation stop (Nomad's
// api.AllocStopResponse).
type AllocStopResponse struct {
	EvalID string
	Index  uint64
}

// DeploymentUpdateResponse answers a deployment promote, fail, pause or
// health update (Nomad's api.DeploymentUpdateResponse).
type DeploymentUpdateResponse struct {
	EvalID                string
	EvalCreateIndex       uint64
	DeploymentModifyIndex uint64
	// RevertedJobVersion is the stable version a failure reverted the job
	// to (auto_revert), absent when it reverted nothing.
	RevertedJobVersion *uint64 `json:",omitempty"`
	Index              uint64
}
