package deployments

import (
	"encoding/json"
	"time"
)

// State is a deployment's progress for one group: Nomad's api.DeploymentState.
type State struct {
	PlacedCanaries    []string
	AutoRevert        bool
	ProgressDeadline  time.Duration
	RequireProgressBy time.Time
	Promoted          bool
	DesiredCanaries   int
	DesiredTotal      int
	PlacedAllocs      int
	HealthyAllocs     int
	UnhealthyAllocs   int
}

// apiDeployment is Nomad's api.Deployment.
type apiDeployment struct {
	ID                 string
	Namespace          string
	JobID              string
	JobVersion         uint64
	JobModifyIndex     uint64
	JobSpecModifyIndex uint64
	JobCreateIndex     uint64
	IsMultiregion      bool
	TaskGroups         map[string]*State
	Status             string
	StatusDescription  string
	CreateIndex        uint64
	ModifyIndex        uint64
	CreateTime         int64
	ModifyTime         int64
}

// MarshalJSON implements json.Marshaler: Nomad's api.Deployment.
func (d *Deployment) MarshalJSON() ([]byte, error) {
	var groups map[string]*State
	if d.TaskGroups != nil {
		groups = make(map[string]*State, len(d.TaskGroups))
		for name, g := range d.TaskGroups {
			if g == nil {
				continue
			}
			var by time.Time
			if g.RequireProgressBy != 0 {
				by = time.Unix(0, g.RequireProgressBy).UTC()
			}
			groups[name] = &State{PlacedCanaries: g.PlacedCanaries, AutoRevert: g.AutoRevert,
				ProgressDeadline: g.ProgressDeadline, RequireProgressBy: by,
				Promoted: g.Promoted, DesiredCanaries: g.DesiredCanaries, DesiredTotal: g.DesiredTotal,
				PlacedAllocs: g.PlacedAllocs, HealthyAllocs: g.HealthyAllocs, UnhealthyAllocs: g.UnhealthyAllocs}
		}
	}
	return json.Marshal(apiDeployment{ID: d.ID, Namespace: d.Namespace, JobID: d.JobID, JobVersion: d.JobVersion,
		JobModifyIndex: d.JobModifyIndex, JobSpecModifyIndex: d.JobSpecModifyIndex, JobCreateIndex: d.JobCreateIndex,
		TaskGroups: groups, Status: d.Status,
		StatusDescription: d.StatusDescription, CreateIndex: d.CreateIndex, ModifyIndex: d.ModifyIndex,
		CreateTime: d.CreateTime, ModifyTime: d.ModifyTime})
}
