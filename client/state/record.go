package state

import (
	"time"

	"github.com/ordoplane/ordo/client/driver"
	"github.com/ordoplane/ordo/events"
)

// Alloc is what the client keeps about one allocation.
type Alloc struct {
	// Version is the record's format (FormatVersion), set by PutAlloc.
	Version int
	// Alloc is the allocation as the servers last sent it.
	Alloc events.Allocation
	// Job is the job version the allocation runs.
	Job *events.Job
	// Tasks holds each task's record, by task name.
	Tasks map[string]*Task
	// DeploymentStatus is the health the client reported, if any.
	DeploymentStatus *events.AllocDeploymentStatus `json:",omitempty"`
}

// Task is what the client keeps about one task of an allocation.
type Task struct {
	// State is what the client reports: state, failed, restarts, times,
	// events.
	State events.TaskState
	// Attempt is the restart count of the task's latest start attempt:
	// the attempt (alloc, task, Attempt) is started at most once, ever.
	Attempt int
	// Starting is set (and stored) before the driver is asked to start
	// Attempt, and cleared once Handle is stored or the start failed. A
	// record found with Starting set after a restart is an attempt whose
	// fate is unknown: it is never started again.
	Starting bool `json:",omitempty"`
	// Handle is the running task's handle state, for driver.Recover; nil
	// when the task is not running.
	Handle *driver.HandleState `json:",omitempty"`
	// RestartWindowStart and RestartWindowCount are the restart policy's
	// interval and the restarts counted in it.
	RestartWindowStart time.Time `json:",omitzero"`
	RestartWindowCount int       `json:",omitempty"`
	// Done marks a task that will not run again (dead for good).
	Done bool `json:",omitempty"`
}
