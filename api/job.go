package api

import "github.com/ordoplane/ordo/events"

// JobListStub is a job as GET /v1/jobs lists it (the fields the CLI
// reads; SubmitTime is Unix nanoseconds).
type JobListStub struct {
	ID         string
	Namespace  string
	Type       string
	Priority   int
	Status     string
	Stop       bool
	SubmitTime int64
}

// Job is a job as GET /v1/job/<id> answers it: the registered spec with
// the status and indexes the servers keep.
type Job struct {
	events.Job
	Status         string
	CreateIndex    uint64
	ModifyIndex    uint64
	JobModifyIndex uint64
}

// JobSummary is the answer of GET /v1/job/<id>/summary: per task group,
// allocations counted by state (Queued, Starting, Running, Failed,
// Complete, Lost, Unknown), and a periodic or parameterized job's
// children by status.
type JobSummary struct {
	Summary  map[string]map[string]int
	Children *struct{ Pending, Running, Dead int64 }
}
