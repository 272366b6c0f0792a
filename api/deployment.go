package api

import "time"

// Deployment is a deployment as GET /v1/deployment/<id>,
// /v1/deployments and /v1/job/<id>/deployment answer it.
type Deployment struct {
	ID                string
	Namespace         string
	JobID             string
	JobVersion        uint64
	Status            string
	StatusDescription string
	TaskGroups        map[string]*DeploymentState
	CreateIndex       uint64
	ModifyIndex       uint64
}

// DeploymentState is one task group's progress in a Deployment.
type DeploymentState struct {
	Promoted          bool
	AutoRevert        bool
	DesiredCanaries   int
	DesiredTotal      int
	PlacedAllocs      int
	HealthyAllocs     int
	UnhealthyAllocs   int
	PlacedCanaries    []string
	RequireProgressBy time.Time
}

// Deployment statuses a deployment ends in.
const (
	DeploymentStatusSuccessful = "successful"
	DeploymentStatusFailed     = "failed"
	DeploymentStatusCancelled  = "cancelled"
)

// Active reports whether d is still rolling out (not successful, failed
// or cancelled).
func (d *Deployment) Active() bool {
	switch d.Status {
	case DeploymentStatusSuccessful, DeploymentStatusFailed, DeploymentStatusCancelled:
		return false
	}
	return true
}
