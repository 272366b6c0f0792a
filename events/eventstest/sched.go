package eventstest

import (
	"time"

	"github.com/ordoplane/ordo/events"
)

// schedSamples returns a fully populated payload of every evaluation,
// allocation and deployment event type.
func schedSamples() map[string]events.Payload {
	yes := true
	eval := events.Evaluation{
		ID: "eval-1", Namespace: "payments", Priority: 50, Type: events.JobTypeService,
		TriggeredBy: events.EvalTriggerJobRegister, JobID: "web", JobModifyIndex: 12,
		NodeID: "node-1", NodeModifyIndex: 9, DeploymentID: "dep-1", Status: events.EvalStatusBlocked,
		StatusDescription: "created to place remaining allocations", Wait: 5 * time.Second, WaitUntil: 1700000000000000000,
		NextEval: "eval-2", PreviousEval: "eval-0", BlockedEval: "eval-3",
		ClassEligibility: map[string]bool{"compute": true}, EscapedComputedClass: true,
		QueuedAllocations: map[string]int{"web": 2},
		FailedTGAllocs: map[string]*events.AllocMetric{"web": {NodesEvaluated: 3, NodesFiltered: 1, NodesInPool: 3,
			NodesAvailable: map[string]int{"dc1": 3}, ClassFiltered: map[string]int{"gpu": 1},
			ConstraintFiltered: map[string]int{"${attr.kernel.name} = linux": 1}, NodesExhausted: 2,
			ClassExhausted: map[string]int{"compute": 2}, DimensionExhausted: map[string]int{"memory": 2}, CoalescedFailures: 1}},
		SnapshotIndex: 40, CreateTime: 1700000000000000000, ModifyTime: 1700000001000000000,
	}
	alloc := events.Allocation{
		ID: "alloc-1", Namespace: "payments", EvalID: "eval-1", Name: "web.web[0]", NodeID: "node-1", NodeName: "client-1",
		JobID: "web", JobVersion: 3, TaskGroup: "web", Resources: events.Resources{CPU: 100, MemoryMB: 64, DiskMB: 10},
		DesiredStatus: events.AllocDesiredRun, DesiredDescription: "placed",
		DesiredTransition: events.DesiredTransition{Migrate: &yes, NoShutdownDelay: &yes},
		ClientStatus:      events.AllocClientRunning, ClientDescription: "tasks are running",
		TaskStates:   map[string]*events.TaskState{"server": {State: "running", Restarts: 1, StartedAt: 1700000002000000000}},
		DeploymentID: "dep-1", DeploymentStatus: &events.AllocDeploymentStatus{Healthy: &yes, Timestamp: 1700000003000000000, Canary: true},
		PreviousAllocation: "alloc-0", NextAllocation: "alloc-2",
		RescheduleEvents: []events.RescheduleEvent{{RescheduleTime: 1699999999000000000, PrevAllocID: "alloc-0", PrevNodeID: "node-0", Delay: 30 * time.Second}},
		FollowupEvalID:   "eval-4", Metrics: &events.AllocMetric{NodesEvaluated: 3},
		AllocatedResources: &events.AllocatedResources{Shared: events.AllocatedSharedResources{
			Networks: []events.NetworkResource{{Mode: events.NetworkModeHost, IP: "10.0.0.7",
				DynamicPorts: []events.Port{{Label: "http", Value: 23456}}}},
			Ports: []events.PortMapping{{Label: "http", Value: 23456, HostIP: "10.0.0.7"}}}},
		CreateTime: 1700000000000000000, ModifyTime: 1700000004000000000,
	}
	return map[string]events.Payload{
		"EvalsUpserted": &events.EvalsUpserted{Evals: []events.Evaluation{eval}},
		"EvalsDeleted":  &events.EvalsDeleted{IDs: []string{"eval-1", "eval-2"}},
		"EvalsPageDeleted": &events.EvalsPageDeleted{Filter: `Status == "pending"`, From: "00000000000000000012\x00eval-0", To: "00000000000000000020\x00eval-9",
			PageSize: 1000, ScanLimit: 4000, IDs: []string{"eval-1", "eval-2"},
			Deleted: []events.DeletedEval{{Namespace: "default", JobID: "web", CreateIndex: 12}, {Namespace: "default", JobID: "web", CreateIndex: 13}}, Skipped: 1, Next: "00000000000000000015\x00eval-3"},
		"DeploymentsDeleted": &events.DeploymentsDeleted{IDs: []string{"dep-1"}},
		"AllocsPlaced":       &events.AllocsPlaced{EvalID: "eval-1", Allocs: []events.Allocation{alloc}},
		"AllocsDesiredUpdated": &events.AllocsDesiredUpdated{EvalID: "eval-1", Updates: []events.AllocDesiredUpdate{{
			ID: "alloc-1", DesiredStatus: events.AllocDesiredStop, DesiredDescription: "alloc stopped by user",
			DesiredTransition: events.DesiredTransition{NoShutdownDelay: &yes}, ClientStatus: events.AllocClientLost,
			FollowupEvalID: "eval-5"}}},
		"AllocsClientUpdated": &events.AllocsClientUpdated{NodeID: "node-1", Updates: []events.AllocClientUpdate{{
			ID: "alloc-1", ClientStatus: events.AllocClientFailed, ClientDescription: "task failed",
			TaskStates: map[string]*events.TaskState{"server": {State: "dead", Failed: true, FinishedAt: 1700000005000000000,
				Events: []events.TaskEvent{{Type: events.TaskEventTerminated, Time: 1700000004000000000, Message: "exit 1",
					ExitCode: 1, Signal: 9, FailsTask: true, StartDelay: time.Second, KillTimeout: 5 * time.Second}}}},
			DeploymentStatus: &events.AllocDeploymentStatus{Healthy: &yes, Timestamp: 1700000005000000000}}}},
		"AllocsDeleted": &events.AllocsDeleted{IDs: []string{"alloc-1"}},
		"DeploymentUpserted": &events.DeploymentUpserted{Deployment: events.Deployment{
			ID: "dep-1", Namespace: "payments", JobID: "web", JobVersion: 3, JobModifyIndex: 12, JobCreateIndex: 10,
			JobSpecModifyIndex: 12, Status: events.DeploymentStatusInitializing, StatusDescription: "Deployment is initializing",
			TaskGroups: map[string]*events.DeploymentState{"web": {AutoRevert: true, Promoted: true,
				PlacedCanaries: []string{"alloc-1"}, DesiredCanaries: 1, DesiredTotal: 3, PlacedAllocs: 2,
				HealthyAllocs: 1, UnhealthyAllocs: 1, RequireProgressBy: 1700000600000000000,
				ProgressDeadline: 10 * time.Minute}},
			CreateTime: 1700000000000000000, ModifyTime: 1700000001000000000}},
		"DeploymentStatusUpdated": &events.DeploymentStatusUpdated{ID: "dep-1", Status: events.DeploymentStatusPending,
			StatusDescription: "Deployment is running", Promote: true, Groups: []string{"web"},
			RequireProgressBy: map[string]int64{"web": 1700000600000000000}},
	}
}
