package schedulertest

import (
	"time"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/processors/scheduler"
)

// Node returns a ready, eligible node in dc1 and the default pool with
// 4000 MHz and 8192 MB, a healthy exec driver and kernel.name linux.
func Node(id string) *scheduler.Node {
	return &scheduler.Node{
		ID: id, Name: id, Datacenter: "dc1", NodePool: "default",
		Attributes:            map[string]string{"kernel.name": "linux", "unique.hostname": id},
		Resources:             events.NodeResources{CPU: 4000, MemoryMB: 8192, DiskMB: 0},
		Drivers:               map[string]events.DriverInfo{"exec": {Detected: true, Healthy: true}},
		Status:                events.NodeStatusReady,
		SchedulingEligibility: events.NodeEligible,
	}
}

// Job returns a canonical job of type typ in the default namespace with one
// group named like the job, count allocations of one exec task asking
// 500 MHz and 256 MB, in every datacenter, with the type's default
// reschedule policy (as the jobspec package fills it in).
func Job(id, typ string, count int) *events.Job {
	tg := events.TaskGroup{
		Name: id, Count: count,
		Tasks: []events.Task{{Name: "main", Driver: "exec", Config: events.TaskConfig{"command": "/bin/true"},
			Resources: &events.Resources{CPU: 500, MemoryMB: 256}}},
	}
	switch typ {
	case events.JobTypeService:
		tg.ReschedulePolicy = &events.ReschedulePolicy{Delay: 30 * time.Second, DelayFunction: "exponential",
			MaxDelay: time.Hour, Unlimited: true}
	case events.JobTypeBatch:
		tg.ReschedulePolicy = &events.ReschedulePolicy{Attempts: 1, Interval: 24 * time.Hour, Delay: 5 * time.Second,
			DelayFunction: "constant"}
	}
	return &events.Job{ID: id, Name: id, Namespace: "default", Type: typ, Priority: 50,
		Datacenters: []string{"*"}, NodePool: "default", TaskGroups: []events.TaskGroup{tg}}
}
