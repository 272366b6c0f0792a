package allocrunner

import "github.com/ordoplane/ordo/events"

// ClientStatus derives an allocation's client status from its tasks'
// states, as Nomad does: failed if any task failed, else running if any
// runs, else pending if any is pending (or no task has a state yet), else
// complete.
func ClientStatus(states map[string]*events.TaskState) (status, description string) {
	var pending, running, dead, failed bool
	for _, s := range states {
		if s == nil {
			pending = true
			continue
		}
		switch s.State {
		case events.TaskStateRunning:
			running = true
		case events.TaskStateDead:
			if s.Failed {
				failed = true
			} else {
				dead = true
			}
		default:
			pending = true
		}
	}
	switch {
	case failed:
		return events.AllocClientFailed, "Failed tasks"
	case running:
		return events.AllocClientRunning, "Tasks are running"
	case pending || !dead:
		return events.AllocClientPending, "No tasks have started"
	}
	return events.AllocClientComplete, "All tasks have completed"
}
