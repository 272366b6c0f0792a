package httpapi

import (
	"maps"
	"slices"

	"github.com/ordoplane/ordo/client/allocrunner"
	"github.com/ordoplane/ordo/events"
)

// Allocs finds the client's allocations.
type Allocs interface {
	// Alloc returns allocation id if this client runs it, or ran it and
	// still keeps its directory.
	Alloc(id string) (Alloc, bool)
}

// Alloc is one allocation of the client, as the API reads it.
type Alloc interface {
	// Tasks returns the names of the allocation's tasks.
	Tasks() []string
	// LogPath returns the current file of task's log stream, "stdout" or
	// "stderr"; rotated files are named after it (driver.RotatedPath).
	LogPath(task, stream string) string
	// TaskDone reports whether task will write no more output: it is dead
	// for good (every task is, once the allocation is terminal).
	TaskDone(task string) bool
	// Status returns the allocation's state as the client reports it.
	Status() events.AllocClientUpdate
}

// Runners serves the client's alloc runners (client.Client.Runner) as
// Allocs.
type Runners func(id string) (*allocrunner.Runner, bool)

var _ Allocs = Runners(nil)

// Alloc implements Allocs.
func (f Runners) Alloc(id string) (Alloc, bool) {
	r, ok := f(id)
	if !ok {
		return nil, false
	}
	return runnerAlloc{r}, true
}

// runnerAlloc is an alloc runner as an Alloc.
type runnerAlloc struct{ r *allocrunner.Runner }

func (a runnerAlloc) Tasks() []string {
	u, _ := a.r.ClientUpdate()
	return slices.Sorted(maps.Keys(u.TaskStates))
}

func (a runnerAlloc) LogPath(task, stream string) string {
	if stream == StreamStderr {
		return a.r.Dir().Stderr(task)
	}
	return a.r.Dir().Stdout(task)
}

func (a runnerAlloc) TaskDone(task string) bool {
	t, ok := a.r.TaskRecord(task)
	return !ok || t.Done
}

func (a runnerAlloc) Status() events.AllocClientUpdate {
	u, _ := a.r.ClientUpdate()
	return u
}
