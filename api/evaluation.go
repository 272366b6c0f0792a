package api

import (
	"time"

	"github.com/ordoplane/ordo/events"
)

// Evaluation is an evaluation as GET /v1/evaluation/<id> answers it
// (Nomad's api.Evaluation; lists answer a subset of these fields).
type Evaluation struct {
	ID                string
	Priority          int
	Type              string
	TriggeredBy       string
	Namespace         string
	JobID             string
	JobModifyIndex    uint64
	NodeID            string
	NodeModifyIndex   uint64
	DeploymentID      string
	Status            string
	StatusDescription string
	Wait              time.Duration
	WaitUntil         time.Time
	NextEval          string
	PreviousEval      string
	BlockedEval       string
	// FailedTGAllocs explains, per task group, why placements failed.
	FailedTGAllocs    map[string]*AllocationMetric
	QueuedAllocations map[string]int
	// RelatedEvals are the next, previous and blocked evaluations, with
	// ?related=true.
	RelatedEvals  []Evaluation `json:",omitempty"`
	SnapshotIndex uint64
	CreateIndex   uint64
	ModifyIndex   uint64
	// CreateTime and ModifyTime are Unix nanoseconds.
	CreateTime int64
	ModifyTime int64
}

// AllocationMetric explains why a task group's allocations could not be
// placed: how many nodes each constraint or class filtered and which
// resource dimensions were exhausted (Nomad's AllocationMetric).
type AllocationMetric = events.AllocMetric
