package events

import "time"

// KindEval is the entity kind of an evaluation; its value is the eval id.
const KindEval = "eval"

// The statuses of an evaluation.
const (
	EvalStatusPending  = "pending"
	EvalStatusBlocked  = "blocked"
	EvalStatusComplete = "complete"
	EvalStatusFailed   = "failed"
	EvalStatusCanceled = "canceled"
)

// What triggered an evaluation.
const (
	EvalTriggerJobRegister       = "job-register"
	EvalTriggerJobDeregister     = "job-deregister"
	EvalTriggerNodeUpdate        = "node-update"
	EvalTriggerNodeDrain         = "node-drain"
	EvalTriggerAllocStop         = "alloc-stop"
	EvalTriggerRetryFailedAlloc  = "alloc-failure"
	EvalTriggerQueuedAllocs      = "queued-allocs"
	EvalTriggerPeriodicJob       = "periodic-job"
	EvalTriggerDeploymentWatcher = "deployment-watcher"
	EvalTriggerMaxPlans          = "max-plan-attempts"
	EvalTriggerReconnect         = "reconnect"
	EvalTriggerFailedFollowUp    = "failed-eval-follow-up"
)

// Evaluation is a request to reconcile a job with the cluster, shaped like
// Nomad's api.Evaluation.
type Evaluation struct {
	ID          string `msgpack:"id" json:"ID"`
	Namespace   string `msgpack:"ns" json:"Namespace"`
	Priority    int    `msgpack:"pri" json:"Priority"`
	Type        string `msgpack:"ty" json:"Type"`
	TriggeredBy string `msgpack:"trig" json:"TriggeredBy"`
	JobID       string `msgpack:"job" json:"JobID"`
	// JobModifyIndex is the job's modify index the eval was created for.
	JobModifyIndex    uint64 `msgpack:"jmi,omitempty" json:"JobModifyIndex"`
	NodeID            string `msgpack:"node,omitempty" json:"NodeID"`
	NodeModifyIndex   uint64 `msgpack:"nmi,omitempty" json:"NodeModifyIndex"`
	DeploymentID      string `msgpack:"dep,omitempty" json:"DeploymentID"`
	Status            string `msgpack:"st" json:"Status"`
	StatusDescription string `msgpack:"std,omitempty" json:"StatusDescription"`
	// Wait delays a follow-up eval; WaitUntil is its leader time, Unix ns.
	Wait      time.Duration `msgpack:"wait,omitempty" json:"Wait"`
	WaitUntil int64         `msgpack:"wu,omitempty" json:"WaitUntil"`
	// NextEval, PreviousEval and BlockedEval link related evals (N17).
	NextEval     string `msgpack:"next,omitempty" json:"NextEval"`
	PreviousEval string `msgpack:"prev,omitempty" json:"PreviousEval"`
	BlockedEval  string `msgpack:"blk,omitempty" json:"BlockedEval"`
	// ClassEligibility records, for a blocked eval, which node classes
	// could ever fit it; EscapedComputedClass says the job's constraints
	// look past the class (so any capacity change may unblock it).
	ClassEligibility     map[string]bool `msgpack:"ce,omitempty" json:"ClassEligibility"`
	EscapedComputedClass bool            `msgpack:"ecc,omitempty" json:"EscapedComputedClass"`
	// QueuedAllocations counts per task group the allocations not yet placed.
	QueuedAllocations map[string]int `msgpack:"qa,omitempty" json:"QueuedAllocations"`
	// FailedTGAllocs explains, per task group, why placements failed.
	FailedTGAllocs map[string]*AllocMetric `msgpack:"fail,omitempty" json:"FailedTGAllocs"`
	// SnapshotIndex is the index of the state the scheduler decided on, so
	// the decision can be re-run against the same snapshot.
	SnapshotIndex uint64 `msgpack:"si,omitempty" json:"SnapshotIndex"`
	// CreateTime and ModifyTime are leader times, Unix ns.
	CreateTime int64 `msgpack:"ct,omitempty" json:"CreateTime"`
	ModifyTime int64 `msgpack:"mt,omitempty" json:"ModifyTime"`
	// CreateIndex and ModifyIndex are the indexes of the entries that
	// created and last changed the eval. They are not in events: read
	// models fill them from the row. A worker schedules the eval only on a
	// snapshot at ModifyIndex or later (N2).
	CreateIndex uint64 `msgpack:"-" json:"CreateIndex"`
	ModifyIndex uint64 `msgpack:"-" json:"ModifyIndex"`
}

// Terminal reports whether the eval needs no more work.
func (e *Evaluation) Terminal() bool {
	switch e.Status {
	case EvalStatusComplete, EvalStatusFailed, EvalStatusCanceled:
		return true
	}
	return false
}

// AllocMetric explains a placement: how many nodes were looked at and why
// they were filtered out or exhausted, shaped like Nomad's.
type AllocMetric struct {
	NodesEvaluated     int            `msgpack:"ne,omitempty" json:"NodesEvaluated"`
	NodesFiltered      int            `msgpack:"nf,omitempty" json:"NodesFiltered"`
	NodesInPool        int            `msgpack:"np,omitempty" json:"NodesInPool"`
	NodesAvailable     map[string]int `msgpack:"na,omitempty" json:"NodesAvailable"`
	ClassFiltered      map[string]int `msgpack:"cf,omitempty" json:"ClassFiltered"`
	ConstraintFiltered map[string]int `msgpack:"conf,omitempty" json:"ConstraintFiltered"`
	NodesExhausted     int            `msgpack:"nx,omitempty" json:"NodesExhausted"`
	ClassExhausted     map[string]int `msgpack:"cx,omitempty" json:"ClassExhausted"`
	DimensionExhausted map[string]int `msgpack:"dx,omitempty" json:"DimensionExhausted"`
	CoalescedFailures  int            `msgpack:"cof,omitempty" json:"CoalescedFailures"`
}

// EvalsUpserted records evaluations created or updated (status, links,
// queued counts), in order.
type EvalsUpserted struct {
	Evals []Evaluation `msgpack:"evals" json:"Evals"`
}

// EntityKeys implements Payload: the namespace and job of the first eval,
// then every eval id.
func (p *EvalsUpserted) EntityKeys() []Key {
	var keys []Key
	if len(p.Evals) > 0 {
		keys = append(keys, Key{Kind: KindNamespace, Value: p.Evals[0].Namespace}, Key{Kind: KindJob, Value: p.Evals[0].JobID})
	}
	for _, e := range p.Evals {
		keys = append(keys, Key{Kind: KindEval, Value: e.ID})
	}
	return keys
}

// EvalsDeleted records evaluations removed (garbage collection).
type EvalsDeleted struct {
	IDs []string `msgpack:"ids" json:"IDs"`
}

// EntityKeys implements Payload.
func (p *EvalsDeleted) EntityKeys() []Key {
	keys := make([]Key, 0, len(p.IDs))
	for _, id := range p.IDs {
		keys = append(keys, Key{Kind: KindEval, Value: id})
	}
	return keys
}

func init() {
	Register(Type{Name: "EvalsUpserted", Version: 1, Topic: "Evaluation",
		New: func() Payload { return new(EvalsUpserted) }})
	Register(Type{Name: "EvalsDeleted", Version: 1, Topic: "Evaluation",
		New: func() Payload { return new(EvalsDeleted) }})
}
