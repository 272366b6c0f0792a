package events

import "time"

// KindAlloc is the entity kind of an allocation; its value is the alloc id.
const KindAlloc = "alloc"

// The desired statuses of an allocation: what the servers want.
const (
	AllocDesiredRun   = "run"
	AllocDesiredStop  = "stop"
	AllocDesiredEvict = "evict"
)

// The client statuses of an allocation: what its node reports.
const (
	AllocClientPending  = "pending"
	AllocClientRunning  = "running"
	AllocClientComplete = "complete"
	AllocClientFailed   = "failed"
	AllocClientLost     = "lost"
	// AllocClientUnknown is an allocation on a disconnected node whose
	// group tolerates disconnects (N1).
	AllocClientUnknown = "unknown"
)

// DesiredTransition is a change the servers ask of a running allocation;
// nil fields are unset.
type DesiredTransition struct {
	// Migrate moves the allocation off a draining node.
	Migrate *bool `msgpack:"mig,omitempty" json:"Migrate"`
	// Reschedule replaces a failed allocation.
	Reschedule *bool `msgpack:"res,omitempty" json:"Reschedule"`
	// ForceReschedule replaces it even without a reschedule policy.
	ForceReschedule *bool `msgpack:"fres,omitempty" json:"ForceReschedule"`
	// NoShutdownDelay asks the client to skip the tasks' shutdown delay (N23).
	NoShutdownDelay *bool `msgpack:"nsd,omitempty" json:"NoShutdownDelay"`
}

// The states of a task, as TaskState.State reports them.
const (
	TaskStatePending = "pending"
	TaskStateRunning = "running"
	TaskStateDead    = "dead"
)

// TaskState is what the client reports about one task.
type TaskState struct {
	State      string `msgpack:"st" json:"State"`
	Failed     bool   `msgpack:"f,omitempty" json:"Failed"`
	Restarts   int    `msgpack:"r,omitempty" json:"Restarts"`
	StartedAt  int64  `msgpack:"sa,omitempty" json:"StartedAt"`
	FinishedAt int64  `msgpack:"fa,omitempty" json:"FinishedAt"`
	// Events are the task's latest events, oldest first (the client keeps
	// a bounded number).
	Events []TaskEvent `msgpack:"ev,omitempty" json:"Events,omitempty"`
}

// The types of task events, as Nomad names them.
const (
	TaskEventReceived      = "Received"
	TaskEventSetup         = "Task Setup"
	TaskEventStarted       = "Started"
	TaskEventTerminated    = "Terminated"
	TaskEventRestarting    = "Restarting"
	TaskEventNotRestarting = "Not Restarting"
	TaskEventKilling       = "Killing"
	TaskEventKilled        = "Killed"
	TaskEventDriverFailure = "Driver Failure"
	TaskEventSetupFailure  = "Setup Failure"
	// TaskEventShutdownDelay is the wait of a task's shutdown_delay
	// before its kill signal.
	TaskEventShutdownDelay = "Waiting for shutdown delay"
	// TaskEventSiblingFailed is a task killed because another task of its
	// allocation failed.
	TaskEventSiblingFailed = "Sibling Task Failed"
	// TaskEventRestartSignaled is a restart a user asked for (alloc
	// restart); TaskEventSignaling a signal a user sent (alloc signal).
	TaskEventRestartSignaled = "Restart Signaled"
	TaskEventSignaling       = "Signaling"
)

// TaskEvent is one thing that happened to a task (Nomad's TaskEvent).
type TaskEvent struct {
	Type string `msgpack:"ty" json:"Type"`
	// Time is the client's time of the event, Unix ns.
	Time    int64  `msgpack:"t" json:"Time"`
	Message string `msgpack:"m,omitempty" json:"Message,omitempty"`
	// ExitCode and Signal are how a terminated task exited.
	ExitCode int `msgpack:"ec,omitempty" json:"ExitCode,omitempty"`
	Signal   int `msgpack:"sig,omitempty" json:"Signal,omitempty"`
	// FailsTask marks the event that failed the task.
	FailsTask bool `msgpack:"ft,omitempty" json:"FailsTask,omitempty"`
	// StartDelay is how long a restarting task waits before it starts again.
	StartDelay time.Duration `msgpack:"sd,omitempty" json:"StartDelay,omitempty"`
	// KillTimeout is how long a killed task has between its kill signal
	// and being killed.
	KillTimeout time.Duration `msgpack:"kt,omitempty" json:"KillTimeout,omitempty"`
}

// AllocDeploymentStatus is an allocation's health within its deployment.
type AllocDeploymentStatus struct {
	Healthy   *bool `msgpack:"h,omitempty" json:"Healthy"`
	Timestamp int64 `msgpack:"ts,omitempty" json:"Timestamp"`
	Canary    bool  `msgpack:"c,omitempty" json:"Canary"`
}

// RescheduleEvent is one earlier attempt an allocation replaced.
type RescheduleEvent struct {
	RescheduleTime int64         `msgpack:"t" json:"RescheduleTime"`
	PrevAllocID    string        `msgpack:"pa" json:"PrevAllocID"`
	PrevNodeID     string        `msgpack:"pn" json:"PrevNodeID"`
	Delay          time.Duration `msgpack:"d,omitempty" json:"Delay"`
}

// Allocation is a task group instance placed on a node, shaped like
// Nomad's api.Allocation. The job is referenced by (Namespace, JobID,
// JobVersion), not embedded.
type Allocation struct {
	ID        string `msgpack:"id" json:"ID"`
	Namespace string `msgpack:"ns" json:"Namespace"`
	EvalID    string `msgpack:"eval" json:"EvalID"`
	// Name is job.group[index].
	Name       string `msgpack:"n" json:"Name"`
	NodeID     string `msgpack:"node" json:"NodeID"`
	NodeName   string `msgpack:"nn,omitempty" json:"NodeName"`
	JobID      string `msgpack:"job" json:"JobID"`
	JobVersion uint64 `msgpack:"jv,omitempty" json:"JobVersion"`
	TaskGroup  string `msgpack:"tg" json:"TaskGroup"`
	// Resources is the sum of the group's tasks' resources.
	Resources Resources `msgpack:"res" json:"Resources"`

	DesiredStatus      string            `msgpack:"ds" json:"DesiredStatus"`
	DesiredDescription string            `msgpack:"dd,omitempty" json:"DesiredDescription"`
	DesiredTransition  DesiredTransition `msgpack:"dt,omitempty" json:"DesiredTransition"`

	ClientStatus      string                `msgpack:"cs" json:"ClientStatus"`
	ClientDescription string                `msgpack:"cd,omitempty" json:"ClientDescription"`
	TaskStates        map[string]*TaskState `msgpack:"ts,omitempty" json:"TaskStates"`

	DeploymentID     string                 `msgpack:"dep,omitempty" json:"DeploymentID"`
	DeploymentStatus *AllocDeploymentStatus `msgpack:"depst,omitempty" json:"DeploymentStatus"`

	PreviousAllocation string            `msgpack:"prev,omitempty" json:"PreviousAllocation"`
	NextAllocation     string            `msgpack:"next,omitempty" json:"NextAllocation"`
	RescheduleEvents   []RescheduleEvent `msgpack:"resch,omitempty" json:"RescheduleEvents"`
	FollowupEvalID     string            `msgpack:"fe,omitempty" json:"FollowupEvalID"`

	// Metrics explains the placement.
	Metrics *AllocMetric `msgpack:"met,omitempty" json:"Metrics"`
	// SigningKeyID is the root key that signs the allocation's workload
	// identity (N5): the active key when the plan committed; empty before
	// the cluster had a key.
	SigningKeyID string `msgpack:"skid,omitempty" json:"SigningKeyID,omitempty"`
	// AllocatedResources holds the network and ports the scheduler gave
	// the allocation (events/network.go); nil when its group asks none.
	AllocatedResources *AllocatedResources `msgpack:"ares,omitempty" json:"AllocatedResources,omitempty"`

	// CreateTime and ModifyTime are leader times, Unix ns.
	CreateTime int64 `msgpack:"ct,omitempty" json:"CreateTime"`
	ModifyTime int64 `msgpack:"mt,omitempty" json:"ModifyTime"`
}

// ServerTerminal reports whether the servers want the allocation stopped.
func (a *Allocation) ServerTerminal() bool {
	return a.DesiredStatus == AllocDesiredStop || a.DesiredStatus == AllocDesiredEvict
}

// ClientTerminal reports whether the allocation has stopped running on its node.
func (a *Allocation) ClientTerminal() bool {
	switch a.ClientStatus {
	case AllocClientComplete, AllocClientFailed, AllocClientLost:
		return true
	}
	return false
}

// Terminal reports whether the allocation is stopped for good.
func (a *Allocation) Terminal() bool { return a.ServerTerminal() || a.ClientTerminal() }

// AllocDesiredUpdate changes what the servers want of one allocation.
type AllocDesiredUpdate struct {
	ID                 string            `msgpack:"id" json:"ID"`
	DesiredStatus      string            `msgpack:"ds,omitempty" json:"DesiredStatus"`
	DesiredDescription string            `msgpack:"dd,omitempty" json:"DesiredDescription"`
	DesiredTransition  DesiredTransition `msgpack:"dt,omitempty" json:"DesiredTransition"`
	// ClientStatus, when set, is decided by the servers (lost, unknown).
	ClientStatus string `msgpack:"cs,omitempty" json:"ClientStatus"`
	// FollowupEvalID links a rescheduling follow-up eval.
	FollowupEvalID string `msgpack:"fe,omitempty" json:"FollowupEvalID"`
}

// AllocClientUpdate is what a node reports about one of its allocations.
type AllocClientUpdate struct {
	ID                string                 `msgpack:"id" json:"ID"`
	ClientStatus      string                 `msgpack:"cs" json:"ClientStatus"`
	ClientDescription string                 `msgpack:"cd,omitempty" json:"ClientDescription"`
	TaskStates        map[string]*TaskState  `msgpack:"ts,omitempty" json:"TaskStates"`
	DeploymentStatus  *AllocDeploymentStatus `msgpack:"depst,omitempty" json:"DeploymentStatus"`
}

// AllocsPlaced records new allocations (and replacements updating the
// previous allocation's NextAllocation) committed from a plan.
type AllocsPlaced struct {
	EvalID string       `msgpack:"eval" json:"EvalID"`
	Allocs []Allocation `msgpack:"allocs" json:"Allocs"`
}

// EntityKeys implements Payload: namespace, job, eval, then every alloc and node.
func (p *AllocsPlaced) EntityKeys() []Key {
	keys := []Key{{Kind: KindEval, Value: p.EvalID}}
	if len(p.Allocs) > 0 {
		keys = append([]Key{{Kind: KindNamespace, Value: p.Allocs[0].Namespace}, {Kind: KindJob, Value: p.Allocs[0].JobID}}, keys...)
	}
	for _, a := range p.Allocs {
		keys = append(keys, Key{Kind: KindAlloc, Value: a.ID}, Key{Kind: KindNode, Value: a.NodeID})
	}
	return keys
}

// AllocsDesiredUpdated records what the servers now want of allocations:
// stops, evictions, migrations, stops without shutdown delay (N23).
type AllocsDesiredUpdated struct {
	EvalID  string               `msgpack:"eval,omitempty" json:"EvalID"`
	Updates []AllocDesiredUpdate `msgpack:"up" json:"Updates"`
}

// EntityKeys implements Payload.
func (p *AllocsDesiredUpdated) EntityKeys() []Key {
	keys := make([]Key, 0, len(p.Updates)+1)
	if p.EvalID != "" {
		keys = append(keys, Key{Kind: KindEval, Value: p.EvalID})
	}
	for _, u := range p.Updates {
		keys = append(keys, Key{Kind: KindAlloc, Value: u.ID})
	}
	return keys
}

// AllocsClientUpdated records what a node reported about its allocations.
type AllocsClientUpdated struct {
	NodeID  string              `msgpack:"node" json:"NodeID"`
	Updates []AllocClientUpdate `msgpack:"up" json:"Updates"`
}

// EntityKeys implements Payload.
func (p *AllocsClientUpdated) EntityKeys() []Key {
	keys := []Key{{Kind: KindNode, Value: p.NodeID}}
	for _, u := range p.Updates {
		keys = append(keys, Key{Kind: KindAlloc, Value: u.ID})
	}
	return keys
}

// AllocsDeleted records allocations removed (garbage collection).
type AllocsDeleted struct {
	IDs []string `msgpack:"ids" json:"IDs"`
}

// EntityKeys implements Payload.
func (p *AllocsDeleted) EntityKeys() []Key {
	keys := make([]Key, 0, len(p.IDs))
	for _, id := range p.IDs {
		keys = append(keys, Key{Kind: KindAlloc, Value: id})
	}
	return keys
}

func init() {
	Register(Type{Name: "AllocsPlaced", Version: 1, Topic: "Allocation",
		New: func() Payload { return new(AllocsPlaced) }})
	Register(Type{Name: "AllocsDesiredUpdated", Version: 1, Topic: "Allocation",
		New: func() Payload { return new(AllocsDesiredUpdated) }})
	Register(Type{Name: "AllocsClientUpdated", Version: 1, Topic: "Allocation",
		New: func() Payload { return new(AllocsClientUpdated) }})
	Register(Type{Name: "AllocsDeleted", Version: 1, Topic: "Allocation",
		New: func() Payload { return new(AllocsDeleted) }})
}
