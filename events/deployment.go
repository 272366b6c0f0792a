package events

import "time"

// KindDeployment is the entity kind of a deployment; its value is its id.
const KindDeployment = "deployment"

// The statuses of a deployment.
const (
	// DeploymentStatusInitializing is a deployment created at job
	// registration whose initial state is not yet persisted (N3).
	DeploymentStatusInitializing = "initializing"
	// DeploymentStatusPending is a deployment ready for the scheduler.
	DeploymentStatusPending    = "pending"
	DeploymentStatusRunning    = "running"
	DeploymentStatusPaused     = "paused"
	DeploymentStatusFailed     = "failed"
	DeploymentStatusSuccessful = "successful"
	DeploymentStatusCancelled  = "cancelled"
)

// DeploymentState is a deployment's progress for one task group.
type DeploymentState struct {
	AutoRevert        bool     `msgpack:"ar,omitempty" json:"AutoRevert"`
	Promoted          bool     `msgpack:"pro,omitempty" json:"Promoted"`
	PlacedCanaries    []string `msgpack:"pc,omitempty" json:"PlacedCanaries"`
	DesiredCanaries   int      `msgpack:"dc,omitempty" json:"DesiredCanaries"`
	DesiredTotal      int      `msgpack:"dt,omitempty" json:"DesiredTotal"`
	PlacedAllocs      int      `msgpack:"pa,omitempty" json:"PlacedAllocs"`
	HealthyAllocs     int      `msgpack:"ha,omitempty" json:"HealthyAllocs"`
	UnhealthyAllocs   int      `msgpack:"ua,omitempty" json:"UnhealthyAllocs"`
	RequireProgressBy int64    `msgpack:"rpb,omitempty" json:"RequireProgressBy"`
	// ProgressDeadline is the group's update progress_deadline, recorded
	// when the deployment is created (Nomad's DeploymentState field).
	ProgressDeadline time.Duration `msgpack:"pd,omitempty" json:"ProgressDeadline"`
}

// Deployment rolls a job version out, shaped like Nomad's api.Deployment.
type Deployment struct {
	ID             string `msgpack:"id" json:"ID"`
	Namespace      string `msgpack:"ns" json:"Namespace"`
	JobID          string `msgpack:"job" json:"JobID"`
	JobVersion     uint64 `msgpack:"jv,omitempty" json:"JobVersion"`
	JobModifyIndex uint64 `msgpack:"jmi,omitempty" json:"JobModifyIndex"`
	JobCreateIndex uint64 `msgpack:"jci,omitempty" json:"JobCreateIndex"`
	// JobSpecModifyIndex is the index the job's spec last changed at; with
	// JobModifyIndex and JobCreateIndex, the deployments projection fills
	// it at apply when the deployment is created with its job's
	// registration (the command cannot know its entry's index).
	JobSpecModifyIndex uint64                      `msgpack:"jsmi,omitempty" json:"JobSpecModifyIndex"`
	Status             string                      `msgpack:"st" json:"Status"`
	StatusDescription  string                      `msgpack:"std,omitempty" json:"StatusDescription"`
	TaskGroups         map[string]*DeploymentState `msgpack:"tgs,omitempty" json:"TaskGroups"`
	CreateTime         int64                       `msgpack:"ct,omitempty" json:"CreateTime"`
	ModifyTime         int64                       `msgpack:"mt,omitempty" json:"ModifyTime"`
}

// Active reports whether the deployment is still in progress.
func (d *Deployment) Active() bool {
	switch d.Status {
	case DeploymentStatusInitializing, DeploymentStatusPending, DeploymentStatusRunning, DeploymentStatusPaused:
		return true
	}
	return false
}

// DeploymentUpserted records a deployment created or replaced whole.
type DeploymentUpserted struct {
	Deployment Deployment `msgpack:"d" json:"Deployment"`
}

// EntityKeys implements Payload.
func (p *DeploymentUpserted) EntityKeys() []Key {
	return []Key{{Kind: KindNamespace, Value: p.Deployment.Namespace}, {Kind: KindJob, Value: p.Deployment.JobID},
		{Kind: KindDeployment, Value: p.Deployment.ID}}
}

// DeploymentStatusUpdated records a deployment's status change (promote,
// pause, resume, fail, success; initializing → pending, N3). It patches
// the stored deployment, so a user's change applies over the group counts
// the watcher and the scheduler record meanwhile.
type DeploymentStatusUpdated struct {
	ID                string `msgpack:"id" json:"ID"`
	Status            string `msgpack:"st" json:"Status"`
	StatusDescription string `msgpack:"std,omitempty" json:"StatusDescription"`
	// Promote marks the canaries of Groups promoted (every group's when
	// Groups is empty).
	Promote bool `msgpack:"pro,omitempty" json:"Promote"`
	// Groups names the groups Promote promotes; empty means all.
	Groups []string `msgpack:"gs,omitempty" json:"Groups,omitempty"`
	// RequireProgressBy sets the progress deadline (Unix ns) of the groups
	// it names: a promotion or a resumption restarts their clocks.
	RequireProgressBy map[string]int64 `msgpack:"rpb,omitempty" json:"RequireProgressBy,omitempty"`
}

// EntityKeys implements Payload.
func (p *DeploymentStatusUpdated) EntityKeys() []Key {
	return []Key{{Kind: KindDeployment, Value: p.ID}}
}

func init() {
	Register(Type{Name: "DeploymentUpserted", Version: 1, Topic: "Deployment",
		New: func() Payload { return new(DeploymentUpserted) }})
	Register(Type{Name: "DeploymentStatusUpdated", Version: 1, Topic: "Deployment",
		New: func() Payload { return new(DeploymentStatusUpdated) }})
}
