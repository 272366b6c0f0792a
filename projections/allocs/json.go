package allocs

import (
	"encoding/json"
	"time"

	"github.com/ordoplane/ordo/events"
)

// TaskState is a task's state as Nomad's api.TaskState shows it.
type TaskState struct {
	State      string
	Failed     bool
	Restarts   uint64
	StartedAt  time.Time
	FinishedAt time.Time
	Events     []*TaskEvent
}

// TaskEvent is a task event as Nomad's api.TaskEvent shows it.
type TaskEvent struct {
	Type           string
	Time           int64
	DisplayMessage string
	Message        string
	ExitCode       int
	Signal         int
	FailsTask      bool
	StartDelay     int64
	KillTimeout    time.Duration
}

// DeploymentStatus is Nomad's api.AllocDeploymentStatus.
type DeploymentStatus struct {
	Healthy   *bool
	Timestamp time.Time
	Canary    bool
}

// RescheduleTracker is Nomad's api.RescheduleTracker.
type RescheduleTracker struct {
	Events []events.RescheduleEvent
}

// apiAlloc is Nomad's api.Allocation, with ordo's JobVersion.
type apiAlloc struct {
	ID                 string
	Namespace          string
	EvalID             string
	Name               string
	NodeID             string
	NodeName           string
	JobID              string
	JobVersion         uint64
	TaskGroup          string
	Resources          events.Resources
	AllocatedResources *events.AllocatedResources `json:",omitempty"`
	Metrics            *events.AllocMetric
	DesiredStatus      string
	DesiredDescription string
	DesiredTransition  events.DesiredTransition
	ClientStatus       string
	ClientDescription  string
	TaskStates         map[string]*TaskState
	DeploymentID       string
	DeploymentStatus   *DeploymentStatus
	FollowupEvalID     string
	PreviousAllocation string
	NextAllocation     string
	RescheduleTracker  *RescheduleTracker
	CreateIndex        uint64
	ModifyIndex        uint64
	AllocModifyIndex   uint64
	CreateTime         int64
	ModifyTime         int64
}

// MarshalJSON implements json.Marshaler: Nomad's api.Allocation, with
// times as times where Nomad has them.
func (a *Alloc) MarshalJSON() ([]byte, error) {
	return json.Marshal(apiAlloc{ID: a.ID, Namespace: a.Namespace, EvalID: a.EvalID, Name: a.Name, NodeID: a.NodeID,
		NodeName: a.NodeName, JobID: a.JobID, JobVersion: a.JobVersion, TaskGroup: a.TaskGroup, Resources: a.Resources,
		AllocatedResources: a.AllocatedResources, Metrics: a.Metrics, DesiredStatus: a.DesiredStatus, DesiredDescription: a.DesiredDescription,
		DesiredTransition: a.DesiredTransition, ClientStatus: a.ClientStatus, ClientDescription: a.ClientDescription,
		TaskStates: taskStates(a.TaskStates), DeploymentID: a.DeploymentID,
		DeploymentStatus: deploymentStatus(a.DeploymentStatus), FollowupEvalID: a.FollowupEvalID,
		PreviousAllocation: a.PreviousAllocation, NextAllocation: a.NextAllocation,
		RescheduleTracker: rescheduleTracker(a.RescheduleEvents), CreateIndex: a.CreateIndex,
		ModifyIndex: a.ModifyIndex, AllocModifyIndex: a.ModifyIndex, CreateTime: a.CreateTime, ModifyTime: a.ModifyTime})
}

// Stub is an alloc as lists show it: Nomad's api.AllocationListStub.
type Stub struct {
	ID                 string
	EvalID             string
	Name               string
	Namespace          string
	NodeID             string
	NodeName           string
	JobID              string
	JobType            string
	JobVersion         uint64
	TaskGroup          string
	DesiredStatus      string
	DesiredDescription string
	DesiredTransition  events.DesiredTransition
	ClientStatus       string
	ClientDescription  string
	TaskStates         map[string]*TaskState
	DeploymentStatus   *DeploymentStatus
	FollowupEvalID     string
	PreviousAllocation string
	NextAllocation     string
	RescheduleTracker  *RescheduleTracker
	CreateIndex        uint64
	ModifyIndex        uint64
	CreateTime         int64
	ModifyTime         int64
}

// Stub returns the alloc's list view.
func (a *Alloc) Stub() *Stub {
	return &Stub{ID: a.ID, EvalID: a.EvalID, Name: a.Name, Namespace: a.Namespace, NodeID: a.NodeID,
		NodeName: a.NodeName, JobID: a.JobID, JobVersion: a.JobVersion, TaskGroup: a.TaskGroup,
		DesiredStatus: a.DesiredStatus, DesiredDescription: a.DesiredDescription, DesiredTransition: a.DesiredTransition,
		ClientStatus: a.ClientStatus, ClientDescription: a.ClientDescription, TaskStates: taskStates(a.TaskStates),
		DeploymentStatus: deploymentStatus(a.DeploymentStatus), FollowupEvalID: a.FollowupEvalID,
		PreviousAllocation: a.PreviousAllocation, NextAllocation: a.NextAllocation,
		RescheduleTracker: rescheduleTracker(a.RescheduleEvents), CreateIndex: a.CreateIndex,
		ModifyIndex: a.ModifyIndex, CreateTime: a.CreateTime, ModifyTime: a.ModifyTime}
}

func taskStates(in map[string]*events.TaskState) map[string]*TaskState {
	if in == nil {
		return nil
	}
	out := make(map[string]*TaskState, len(in))
	for name, s := range in {
		if s == nil {
			out[name] = nil
			continue
		}
		out[name] = &TaskState{State: s.State, Failed: s.Failed, Restarts: uint64(max(s.Restarts, 0)),
			StartedAt: unixTime(s.StartedAt), FinishedAt: unixTime(s.FinishedAt), Events: taskEvents(s.Events)}
	}
	return out
}

func taskEvents(in []events.TaskEvent) []*TaskEvent {
	if len(in) == 0 {
		return nil
	}
	out := make([]*TaskEvent, len(in))
	for i, e := range in {
		out[i] = &TaskEvent{Type: e.Type, Time: e.Time, DisplayMessage: e.Message, Message: e.Message,
			ExitCode: e.ExitCode, Signal: e.Signal, FailsTask: e.FailsTask, StartDelay: int64(e.StartDelay),
			KillTimeout: e.KillTimeout}
	}
	return out
}

func deploymentStatus(s *events.AllocDeploymentStatus) *DeploymentStatus {
	if s == nil {
		return nil
	}
	return &DeploymentStatus{Healthy: s.Healthy, Timestamp: unixTime(s.Timestamp), Canary: s.Canary}
}

func rescheduleTracker(evs []events.RescheduleEvent) *RescheduleTracker {
	if len(evs) == 0 {
		return nil
	}
	return &RescheduleTracker{Events: evs}
}

// unixTime converts leader Unix nanoseconds to a time; 0 is the zero time.
func unixTime(ns int64) time.Time {
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns).UTC()
}
