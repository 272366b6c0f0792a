package evals

import (
	"encoding/json"
	"time"

	"github.com/ordoplane/ordo/events"
)

// Stub is an eval as related-eval lists show it: Nomad's api.EvaluationStub.
type Stub struct {
	ID                string
	Priority          int
	Type              string
	TriggeredBy       string
	Namespace         string
	JobID             string
	NodeID            string
	DeploymentID      string
	Status            string
	StatusDescription string
	WaitUntil         time.Time
	NextEval          string
	PreviousEval      string
	BlockedEval       string
	CreateIndex       uint64
	ModifyIndex       uint64
	CreateTime        int64
	ModifyTime        int64
}

// Stub returns the eval's stub.
func (e *Eval) Stub() *Stub {
	return &Stub{ID: e.ID, Priority: e.Priority, Type: e.Type, TriggeredBy: e.TriggeredBy, Namespace: e.Namespace,
		JobID: e.JobID, NodeID: e.NodeID, DeploymentID: e.DeploymentID, Status: e.Status,
		StatusDescription: e.StatusDescription, WaitUntil: unixTime(e.WaitUntil), NextEval: e.NextEval,
		PreviousEval: e.PreviousEval, BlockedEval: e.BlockedEval, CreateIndex: e.CreateIndex,
		ModifyIndex: e.ModifyIndex, CreateTime: e.CreateTime, ModifyTime: e.ModifyTime}
}

// apiEval is Nomad's api.Evaluation.
type apiEval struct {
	ID                   string
	Priority             int
	Type                 string
	TriggeredBy          string
	Namespace            string
	JobID                string
	JobModifyIndex       uint64
	NodeID               string
	NodeModifyIndex      uint64
	DeploymentID         string
	Status               string
	StatusDescription    string
	Wait                 time.Duration
	WaitUntil            time.Time
	NextEval             string
	PreviousEval         string
	BlockedEval          string
	RelatedEvals         []*Stub `json:",omitempty"`
	FailedTGAllocs       map[string]*events.AllocMetric
	ClassEligibility     map[string]bool
	EscapedComputedClass bool
	QueuedAllocations    map[string]int
	SnapshotIndex        uint64
	CreateIndex          uint64
	ModifyIndex          uint64
	CreateTime           int64
	ModifyTime           int64
}

// MarshalJSON implements json.Marshaler: Nomad's api.Evaluation, with
// WaitUntil as a time.
func (e *Eval) MarshalJSON() ([]byte, error) {
	return json.Marshal(apiEval{ID: e.ID, Priority: e.Priority, Type: e.Type, TriggeredBy: e.TriggeredBy,
		Namespace: e.Namespace, JobID: e.JobID, JobModifyIndex: e.JobModifyIndex, NodeID: e.NodeID,
		NodeModifyIndex: e.NodeModifyIndex, DeploymentID: e.DeploymentID, Status: e.Status,
		StatusDescription: e.StatusDescription, Wait: e.Wait, WaitUntil: unixTime(e.WaitUntil),
		NextEval: e.NextEval, PreviousEval: e.PreviousEval, BlockedEval: e.BlockedEval, RelatedEvals: e.RelatedEvals,
		FailedTGAllocs: e.FailedTGAllocs, ClassEligibility: e.ClassEligibility,
		EscapedComputedClass: e.EscapedComputedClass, QueuedAllocations: e.QueuedAllocations,
		SnapshotIndex: e.SnapshotIndex, CreateIndex: e.CreateIndex, ModifyIndex: e.ModifyIndex,
		CreateTime: e.CreateTime, ModifyTime: e.ModifyTime})
}

// unixTime converts leader Unix nanoseconds to a time; 0 is the zero time.
func unixTime(ns int64) time.Time {
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns).UTC()
}
