package summary_test

import (
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/events/eventstest"
	"github.com/ordoplane/ordo/projections/history/summary"
)

// render shows a line as its summary, then one "  Field: old → new" line
// per change.
func render(l summary.Line) string {
	var b strings.Builder
	b.WriteString(l.Summary)
	for _, c := range l.Changes {
		fmt.Fprintf(&b, "\n  %s: %q → %q", c.Field, c.Old, c.New)
	}
	return b.String()
}

// fold feeds the payloads to a tracker for (kind, id) as events at index
// 1, 2, … and returns the rendered lines.
func fold(t *testing.T, kind, id string, ps ...events.Payload) []string {
	t.Helper()
	tr := summary.NewTracker(kind, id)
	var out []string
	for i, p := range ps {
		ev := eventstest.New(t, fmt.Sprint("ev", i), p)
		ev.Index = uint64(i + 1)
		out = append(out, render(tr.Next(&ev)))
	}
	return out
}

var yes, no = true, false

func placedAlloc() events.Allocation {
	return events.Allocation{ID: "a1", Namespace: "default", EvalID: "e1", Name: "web.web[0]", NodeID: "n1", JobID: "web",
		JobVersion: 2, TaskGroup: "web", DesiredStatus: events.AllocDesiredRun, ClientStatus: events.AllocClientPending}
}

func placed(allocs ...events.Allocation) *events.AllocsPlaced {
	return &events.AllocsPlaced{EvalID: "e1", Allocs: allocs}
}

func clientUpdate(node string, u ...events.AllocClientUpdate) *events.AllocsClientUpdated {
	return &events.AllocsClientUpdated{NodeID: node, Updates: u}
}

func desired(eval string, u ...events.AllocDesiredUpdate) *events.AllocsDesiredUpdated {
	return &events.AllocsDesiredUpdated{EvalID: eval, Updates: u}
}

func job(version uint64, counts ...any) *events.JobRegistered {
	j := events.Job{ID: "web", Name: "web", Namespace: "default", Type: events.JobTypeService, Priority: 50,
		Datacenters: []string{"dc1"}, Version: version}
	for i := 0; i < len(counts); i += 2 {
		j.TaskGroups = append(j.TaskGroups, events.TaskGroup{Name: counts[i].(string), Count: counts[i+1].(int)})
	}
	return &events.JobRegistered{Job: j}
}

func eval(status string) events.Evaluation {
	return events.Evaluation{ID: "e1", Namespace: "default", JobID: "web", TriggeredBy: events.EvalTriggerJobRegister, Status: status}
}

func deployment(status string, healthy int) *events.DeploymentUpserted {
	return &events.DeploymentUpserted{Deployment: events.Deployment{ID: "d1", Namespace: "default", JobID: "web", JobVersion: 1,
		Status: status, TaskGroups: map[string]*events.DeploymentState{
			"web": {DesiredTotal: 3, PlacedAllocs: 3, HealthyAllocs: healthy, DesiredCanaries: 1}}}}
}

func node(status string, drivers ...string) *events.NodeRegistered {
	n := events.Node{ID: "n1", Name: "node-1", Datacenter: "dc1", NodeClass: "compute", Status: status,
		Resources: events.NodeResources{CPU: 4000, MemoryMB: 8192}, Drivers: map[string]events.DriverInfo{}}
	for _, d := range drivers {
		n.Drivers[d] = events.DriverInfo{Detected: true, Healthy: true}
	}
	return &events.NodeRegistered{Node: n}
}

// TestSummaries is the table of every event type, seen from each kind of
// entity it touches. Each case folds its events in order; want lists the
// rendered line of each.
func TestSummaries(t *testing.T) {
	replacement := placedAlloc()
	replacement.PreviousAllocation, replacement.DeploymentID = "a0", "d1"
	inPlace := placedAlloc()
	inPlace.JobVersion = 3
	other := placedAlloc()
	other.ID, other.Name, other.NodeID = "a2", "web.web[1]", "n2"

	for _, tc := range []struct {
		name, kind, id string
		events         []events.Payload
		want           []string
	}{
		// Allocations.
		{"alloc life", events.KindAlloc, "a1", []events.Payload{
			placed(placedAlloc()),
			clientUpdate("n1", events.AllocClientUpdate{ID: "a1", ClientStatus: "running",
				TaskStates: map[string]*events.TaskState{"server": {State: "running"}}}),
			desired("e2", events.AllocDesiredUpdate{ID: "a1", DesiredStatus: "stop",
				DesiredDescription: "alloc not needed due to job being stopped"}),
			clientUpdate("n1", events.AllocClientUpdate{ID: "a1", ClientStatus: "complete",
				TaskStates: map[string]*events.TaskState{"server": {State: "dead"}}}),
			&events.AllocsDeleted{IDs: []string{"a1"}},
		}, []string{
			"placed on node n1 by eval e1 (web.web[0], job version 2)" +
				"\n  NodeID: \"\" → \"n1\"\n  JobVersion: \"\" → \"2\"\n  DesiredStatus: \"\" → \"run\"\n  ClientStatus: \"\" → \"pending\"",
			"client status pending → running; task server running" +
				"\n  ClientStatus: \"pending\" → \"running\"\n  TaskStates[server].State: \"\" → \"running\"",
			"desired status run → stop (alloc not needed due to job being stopped), by eval e2" +
				"\n  DesiredStatus: \"run\" → \"stop\"\n  DesiredDescription: \"\" → \"alloc not needed due to job being stopped\"",
			"client status running → complete; task server running → dead" +
				"\n  ClientStatus: \"running\" → \"complete\"\n  TaskStates[server].State: \"running\" → \"dead\"",
			"garbage collected",
		}},
		{"alloc replacement and in-place update", events.KindAlloc, "a1", []events.Payload{
			placed(replacement), placed(inPlace),
		}, []string{
			"placed on node n1 by eval e1, replacing alloc a0 (web.web[0], job version 2, deployment d1)" +
				"\n  NodeID: \"\" → \"n1\"\n  JobVersion: \"\" → \"2\"\n  DesiredStatus: \"\" → \"run\"\n  ClientStatus: \"\" → \"pending\"" +
				"\n  DeploymentID: \"\" → \"d1\"\n  PreviousAllocation: \"\" → \"a0\"",
			"updated in place by eval e1; job version 2 → 3" +
				"\n  JobVersion: \"2\" → \"3\"\n  DeploymentID: \"d1\" → \"\"\n  PreviousAllocation: \"a0\" → \"\"",
		}},
		{"alloc transitions, lost, failed task", events.KindAlloc, "a1", []events.Payload{
			placed(placedAlloc()),
			desired("", events.AllocDesiredUpdate{ID: "a1", DesiredTransition: events.DesiredTransition{Migrate: &yes}}),
			desired("e3", events.AllocDesiredUpdate{ID: "a1", ClientStatus: "lost", FollowupEvalID: "e4",
				DesiredTransition: events.DesiredTransition{Migrate: &no}}),
			desired("", events.AllocDesiredUpdate{ID: "a1", DesiredTransition: events.DesiredTransition{Migrate: &no}}),
			clientUpdate("n1", events.AllocClientUpdate{ID: "a1", ClientStatus: "failed", ClientDescription: "task failed",
				TaskStates:       map[string]*events.TaskState{"server": {State: "dead", Failed: true, Restarts: 2}},
				DeploymentStatus: &events.AllocDeploymentStatus{Healthy: &no}}),
			clientUpdate("n9", events.AllocClientUpdate{ID: "a1", ClientStatus: "running"}),
			clientUpdate("n1", events.AllocClientUpdate{ID: "a1", ClientStatus: "failed", ClientDescription: "task failed",
				TaskStates: map[string]*events.TaskState{"server": {State: "dead", Failed: true, Restarts: 2}}}),
		}, []string{
			"placed on node n1 by eval e1 (web.web[0], job version 2)" +
				"\n  NodeID: \"\" → \"n1\"\n  JobVersion: \"\" → \"2\"\n  DesiredStatus: \"\" → \"run\"\n  ClientStatus: \"\" → \"pending\"",
			"marked migrate\n  DesiredTransition.Migrate: \"\" → \"true\"",
			"client status pending → lost; unmarked migrate; follow-up eval e4, by eval e3" +
				"\n  ClientStatus: \"pending\" → \"lost\"\n  DesiredTransition.Migrate: \"true\" → \"false\"\n  FollowupEvalID: \"\" → \"e4\"",
			"desired state restated, no change",
			"client status lost → failed (task failed); task server dead (failed); task server restarted (2 so far); deployment health unhealthy" +
				"\n  ClientStatus: \"lost\" → \"failed\"\n  ClientDescription: \"\" → \"task failed\"" +
				"\n  TaskStates[server].State: \"\" → \"dead (failed)\"\n  TaskStates[server].Restarts: \"\" → \"2\"" +
				"\n  DeploymentStatus.Healthy: \"\" → \"unhealthy\"",
			"client update from node n9 ignored: the allocation is on node n1",
			"client update, no change",
		}},
		{"alloc events on a node", events.KindNode, "n1", []events.Payload{
			placed(placedAlloc(), other),
			clientUpdate("n1", events.AllocClientUpdate{ID: "a1", ClientStatus: "running"},
				events.AllocClientUpdate{ID: "a3", ClientStatus: "running"}, events.AllocClientUpdate{ID: "a4", ClientStatus: "failed"}),
		}, []string{
			"alloc web.web[0] (a1) placed by eval e1",
			"reported 3 allocs: failed ×1, running ×2",
		}},
		{"alloc events on a job", events.KindJob, "default/web", []events.Payload{
			placed(placedAlloc(), other),
			desired("e2", events.AllocDesiredUpdate{ID: "a1", DesiredStatus: "stop"}, events.AllocDesiredUpdate{ID: "a2", DesiredStatus: "stop"}),
		}, []string{
			"2 allocs placed by eval e1 (job version 2): web.web[0] (a1) on n1, web.web[1] (a2) on n2",
			"2 allocs updated by eval e2: desired stop ×2",
		}},
		{"alloc events on an eval", events.KindEval, "e1", []events.Payload{
			placed(placedAlloc()),
			desired("e1", events.AllocDesiredUpdate{ID: "a1", DesiredStatus: "stop", ClientStatus: "lost"}),
		}, []string{
			"placed 1 alloc: web.web[0] (a1) on n1",
			"1 alloc updated by eval e1: desired stop ×1; client lost ×1",
		}},
		{"alloc events on a namespace", events.KindNamespace, "default", []events.Payload{
			placed(placedAlloc()),
			clientUpdate("n1", events.AllocClientUpdate{ID: "a1", ClientStatus: "running"}),
			&events.AllocsDeleted{IDs: []string{"a1", "a2"}},
		}, []string{
			"1 alloc of job web placed by eval e1 (job version 2): web.web[0] (a1) on n1",
			"node n1 reported 1 alloc: running ×1",
			"2 allocs garbage collected",
		}},

		// Evaluations.
		{"eval life", events.KindEval, "e1", []events.Payload{
			&events.EvalsUpserted{Evals: []events.Evaluation{eval("pending")}},
			&events.EvalsUpserted{Evals: []events.Evaluation{func() events.Evaluation {
				e := eval("complete")
				e.BlockedEval, e.QueuedAllocations = "e2", map[string]int{"web": 2}
				e.FailedTGAllocs = map[string]*events.AllocMetric{"web": {NodesEvaluated: 3, NodesExhausted: 3}}
				return e
			}()}},
			&events.EvalsUpserted{Evals: []events.Evaluation{eval("complete")}},
			&events.EvalsDeleted{IDs: []string{"e1"}},
		}, []string{
			"created: job-register for job web, status pending" +
				"\n  Status: \"\" → \"pending\"\n  TriggeredBy: \"\" → \"job-register\"\n  JobID: \"\" → \"web\"",
			"status pending → complete; blocked eval e2 created; queued web 2; placement failed for web (3 evaluated, 0 filtered, 3 exhausted)" +
				"\n  Status: \"pending\" → \"complete\"\n  BlockedEval: \"\" → \"e2\"\n  QueuedAllocations[web]: \"\" → \"2\"" +
				"\n  FailedTGAllocs[web]: \"\" → \"3 evaluated, 0 filtered, 3 exhausted\"",
			"queued web 2 → (none)\n  BlockedEval: \"e2\" → \"\"\n  QueuedAllocations[web]: \"2\" → \"\"\n  FailedTGAllocs[web]: \"3 evaluated, 0 filtered, 3 exhausted\" → \"\"",
			"garbage collected",
		}},
		{"follow-up eval", events.KindEval, "e1", []events.Payload{
			&events.EvalsUpserted{Evals: []events.Evaluation{func() events.Evaluation {
				e := eval("pending")
				e.TriggeredBy, e.PreviousEval, e.WaitUntil = events.EvalTriggerRetryFailedAlloc, "e0", time.Date(2026, 11, 30, 14, 2, 0, 0, time.UTC).UnixNano()
				return e
			}()}},
		}, []string{
			"created: alloc-failure for job web, status pending, follows eval e0, waits until 2026-11-30T14:02:00Z" +
				"\n  Status: \"\" → \"pending\"\n  TriggeredBy: \"\" → \"alloc-failure\"\n  JobID: \"\" → \"web\"" +
				"\n  PreviousEval: \"\" → \"e0\"\n  WaitUntil: \"\" → \"2026-11-30T14:02:00Z\"",
		}},
		{"evals on a job and a namespace", events.KindJob, "default/web", []events.Payload{
			&events.EvalsUpserted{Evals: []events.Evaluation{eval("pending")}},
			&events.EvalsUpserted{Evals: []events.Evaluation{eval("complete"), func() events.Evaluation {
				e := eval("blocked")
				e.ID = "e2"
				return e
			}()}},
			&events.EvalsDeleted{IDs: []string{"e1"}},
		}, []string{
			"eval e1 pending (job-register)",
			"2 evals: eval e1 complete (job-register), eval e2 blocked (job-register)",
			"1 eval garbage collected",
		}},
		{"eval on a namespace", events.KindNamespace, "default", []events.Payload{
			&events.EvalsUpserted{Evals: []events.Evaluation{eval("pending")}},
		}, []string{"eval e1 for job web pending (job-register)"}},

		// Jobs.
		{"job versions", events.KindJob, "default/web", []events.Payload{
			job(0, "web", 2),
			job(1, "web", 3),
			job(1, "web", 3),
			job(2, "web", 3, "api", 1),
			job(3, "api", 1),
			&events.JobDeregistered{Namespace: "default", ID: "web"},
			&events.JobDeregistered{Namespace: "default", ID: "web", NoShutdownDelay: true},
			func() events.Payload { j := job(4, "api", 1); j.Job.Priority = 70; return j }(),
			&events.JobDeregistered{Namespace: "default", ID: "web", Purge: true},
			job(0, "web", 1),
		}, []string{
			"registered version 0 (type service, count web 2)" +
				"\n  Version: \"\" → \"0\"\n  Type: \"\" → \"service\"\n  Priority: \"\" → \"50\"\n  Stop: \"\" → \"false\"" +
				"\n  Datacenters: \"\" → \"dc1\"\n  TaskGroups[web].Count: \"\" → \"2\"",
			"registered version 1 (count web 2 → 3)\n  Version: \"0\" → \"1\"\n  TaskGroups[web].Count: \"2\" → \"3\"",
			"registered again at version 1, no change",
			"registered version 2 (group api added, count 1)\n  Version: \"1\" → \"2\"\n  TaskGroups[api].Count: \"\" → \"1\"",
			"registered version 3 (group web removed)\n  Version: \"2\" → \"3\"\n  TaskGroups[web].Count: \"3\" → \"\"",
			"stopped\n  Stop: \"false\" → \"true\"",
			"stopped again (it was stopped) without shutdown delay",
			"registered version 4 (started again; priority 50 → 70)\n  Version: \"3\" → \"4\"\n  Priority: \"50\" → \"70\"\n  Stop: \"true\" → \"false\"",
			"purged",
			"registered version 0 (type service, count web 1)" +
				"\n  Version: \"\" → \"0\"\n  Type: \"\" → \"service\"\n  Priority: \"\" → \"50\"\n  Stop: \"\" → \"false\"" +
				"\n  Datacenters: \"\" → \"dc1\"\n  TaskGroups[web].Count: \"\" → \"1\"",
		}},
		{"job spec change only", events.KindJob, "default/web", []events.Payload{job(0, "web", 1), job(1, "web", 1)},
			[]string{"registered version 0 (type service, count web 1)" +
				"\n  Version: \"\" → \"0\"\n  Type: \"\" → \"service\"\n  Priority: \"\" → \"50\"\n  Stop: \"\" → \"false\"" +
				"\n  Datacenters: \"\" → \"dc1\"\n  TaskGroups[web].Count: \"\" → \"1\"",
				"registered version 1 (spec changed)\n  Version: \"0\" → \"1\""}},
		{"job scaled and marked stable", events.KindJob, "default/web", []events.Payload{
			&events.JobScaled{Namespace: "default", JobID: "web", Group: "web",
				Event: events.ScalingEvent{Count: func() *int64 { n := int64(5); return &n }(), PreviousCount: 2, Message: "more"}},
			&events.JobScaled{Namespace: "default", JobID: "web", Group: "web",
				Event: events.ScalingEvent{PreviousCount: 5, Error: true, Message: "metrics down"}},
			&events.JobStabilityUpdated{Namespace: "default", ID: "web", Version: 3, Stable: true},
		}, []string{
			"scaled group web from 2 to 5: more",
			"scaling error for group web: metrics down",
			"version 3 marked stable",
		}},
		{"job scaled on a namespace", events.KindNamespace, "default", []events.Payload{
			&events.JobStabilityUpdated{Namespace: "default", ID: "web", Version: 1},
		}, []string{"job web version 1 marked unstable"}},
		{"jobs on a namespace", events.KindNamespace, "default", []events.Payload{
			job(3, "web", 1),
			&events.JobDeregistered{Namespace: "default", ID: "web", NoShutdownDelay: true},
			&events.JobDeregistered{Namespace: "default", ID: "web", Purge: true},
		}, []string{"job web registered version 3", "job web stopped without shutdown delay", "job web purged"}},

		// Deployments.
		{"deployment life", events.KindDeployment, "d1", []events.Payload{
			deployment("running", 0),
			deployment("running", 2),
			&events.DeploymentStatusUpdated{ID: "d1", Promote: true, Status: "running", StatusDescription: "promoted"},
			&events.DeploymentStatusUpdated{ID: "d1", Status: "successful", StatusDescription: "Deployment completed successfully"},
		}, []string{
			"created for job web version 1 (status running; web 0/3 healthy)" +
				"\n  Status: \"\" → \"running\"\n  JobVersion: \"\" → \"1\"\n  TaskGroups[web].DesiredCanaries: \"\" → \"1\"" +
				"\n  TaskGroups[web].DesiredTotal: \"\" → \"3\"\n  TaskGroups[web].HealthyAllocs: \"\" → \"0\"" +
				"\n  TaskGroups[web].PlacedAllocs: \"\" → \"3\"\n  TaskGroups[web].Promoted: \"\" → \"false\"" +
				"\n  TaskGroups[web].UnhealthyAllocs: \"\" → \"0\"",
			"web healthy 0 → 2\n  TaskGroups[web].HealthyAllocs: \"0\" → \"2\"",
			"canaries promoted\n  StatusDescription: \"\" → \"promoted\"\n  TaskGroups[web].Promoted: \"false\" → \"true\"",
			"status running → successful (Deployment completed successfully)" +
				"\n  Status: \"running\" → \"successful\"\n  StatusDescription: \"promoted\" → \"Deployment completed successfully\"",
		}},
		{"a deployment promoted group by group", events.KindDeployment, "d2", []events.Payload{
			&events.DeploymentUpserted{Deployment: events.Deployment{ID: "d2", Namespace: "default", JobID: "web", JobVersion: 1,
				Status: "running", TaskGroups: map[string]*events.DeploymentState{"api": {DesiredCanaries: 1}, "web": {DesiredCanaries: 1}}}},
			&events.DeploymentStatusUpdated{ID: "d2", Promote: true, Groups: []string{"web"}, Status: "running"},
		}, []string{
			"created for job web version 1 (status running; api 0/0 healthy, web 0/0 healthy)" +
				"\n  Status: \"\" → \"running\"\n  JobVersion: \"\" → \"1\"" +
				"\n  TaskGroups[api].DesiredCanaries: \"\" → \"1\"\n  TaskGroups[web].DesiredCanaries: \"\" → \"1\"" +
				"\n  TaskGroups[api].DesiredTotal: \"\" → \"0\"\n  TaskGroups[web].DesiredTotal: \"\" → \"0\"" +
				"\n  TaskGroups[api].HealthyAllocs: \"\" → \"0\"\n  TaskGroups[web].HealthyAllocs: \"\" → \"0\"" +
				"\n  TaskGroups[api].PlacedAllocs: \"\" → \"0\"\n  TaskGroups[web].PlacedAllocs: \"\" → \"0\"" +
				"\n  TaskGroups[api].Promoted: \"\" → \"false\"\n  TaskGroups[web].Promoted: \"\" → \"false\"" +
				"\n  TaskGroups[api].UnhealthyAllocs: \"\" → \"0\"\n  TaskGroups[web].UnhealthyAllocs: \"\" → \"0\"",
			// Only the group named is promoted.
			"canaries of web promoted\n  TaskGroups[web].Promoted: \"false\" → \"true\"",
		}},
		{"deployments on a job", events.KindJob, "default/web", []events.Payload{deployment("running", 0)},
			[]string{"deployment d1 for version 1: running"}},
		{"deployments on a namespace", events.KindNamespace, "default", []events.Payload{
			deployment("running", 0), &events.DeploymentStatusUpdated{ID: "d1", Status: "failed", StatusDescription: "no progress"},
		}, []string{"deployment d1 for job web version 1: running", "deployment d1 status failed (no progress)"}},

		// Nodes.
		{"node life", events.KindNode, "n1", []events.Payload{
			node("", "exec"),
			&events.NodeStatusUpdated{ID: "n1", Status: "ready"},
			&events.NodeStatusUpdated{ID: "n1", Status: "down", MissedHeartbeat: true},
			node("down", "exec", "mock"),
			&events.NodeEligibilityUpdated{ID: "n1", Eligibility: "ineligible"},
			&events.NodeEligibilityUpdated{ID: "n1", Eligibility: "ineligible"},
			&events.NodeDrainUpdated{ID: "n1", DrainStrategy: &events.DrainStrategy{Deadline: int64(time.Hour)}},
			&events.NodeDrainUpdated{ID: "n1", DrainStrategy: &events.DrainStrategy{Deadline: -1}},
			&events.NodeDrainUpdated{ID: "n1", MarkEligible: true},
			&events.NodeAllocsUpdated{ID: "n1"},
			&events.NodeDeregistered{ID: "n1"},
			node("ready"),
		}, []string{
			"registered (dc1, class compute, status initializing, drivers exec)" +
				"\n  Status: \"\" → \"initializing\"\n  SchedulingEligibility: \"\" → \"eligible\"\n  Name: \"\" → \"node-1\"" +
				"\n  Datacenter: \"\" → \"dc1\"\n  NodeClass: \"\" → \"compute\"\n  Resources.CPU: \"\" → \"4000\"" +
				"\n  Resources.MemoryMB: \"\" → \"8192\"\n  Drivers: \"\" → \"exec\"",
			"status initializing → ready\n  Status: \"initializing\" → \"ready\"",
			"status ready → down (missed heartbeat)\n  Status: \"ready\" → \"down\"",
			"registered again: drivers exec → exec,mock\n  Drivers: \"exec\" → \"exec,mock\"",
			"eligibility eligible → ineligible\n  SchedulingEligibility: \"eligible\" → \"ineligible\"",
			"eligibility stays ineligible",
			"drain started (deadline 1h0m0s)\n  Drain: \"\" → \"deadline 1h0m0s\"",
			"drain updated (force)\n  Drain: \"deadline 1h0m0s\" → \"force\"",
			"drain stopped; eligibility ineligible → eligible\n  Drain: \"force\" → \"\"\n  SchedulingEligibility: \"ineligible\" → \"eligible\"",
			"reported its allocations",
			"deregistered (purged)",
			"registered (dc1, class compute, status ready)" +
				"\n  Status: \"\" → \"ready\"\n  SchedulingEligibility: \"\" → \"eligible\"\n  Name: \"\" → \"node-1\"" +
				"\n  Datacenter: \"\" → \"dc1\"\n  NodeClass: \"\" → \"compute\"\n  Resources.CPU: \"\" → \"4000\"" +
				"\n  Resources.MemoryMB: \"\" → \"8192\"",
		}},
		{"node status with a reason", events.KindNode, "n1", []events.Payload{
			node("ready"),
			&events.NodeStatusUpdated{ID: "n1", Status: "disconnected", Description: "node heartbeat missed", MissedHeartbeat: true},
			&events.NodeStatusUpdated{ID: "n1", Status: "disconnected"},
			&events.NodeDrainUpdated{ID: "n1"},
		}, []string{
			"registered (dc1, class compute, status ready)" +
				"\n  Status: \"\" → \"ready\"\n  SchedulingEligibility: \"\" → \"eligible\"\n  Name: \"\" → \"node-1\"" +
				"\n  Datacenter: \"\" → \"dc1\"\n  NodeClass: \"\" → \"compute\"\n  Resources.CPU: \"\" → \"4000\"" +
				"\n  Resources.MemoryMB: \"\" → \"8192\"",
			"status ready → disconnected (node heartbeat missed)\n  Status: \"ready\" → \"disconnected\"",
			"status stays disconnected",
			"drain stopped (it was not draining)",
		}},

		// Namespaces and servers.
		{"namespace life", events.KindNamespace, "payments", []events.Payload{
			&events.NamespaceUpserted{Namespace: events.Namespace{Name: "payments", Description: "pay"}},
			&events.NamespaceUpserted{Namespace: events.Namespace{Name: "payments", Description: "payments team", Meta: map[string]string{"team": "a"}}},
			&events.NamespaceUpserted{Namespace: events.Namespace{Name: "payments", Description: "payments team", Meta: map[string]string{"team": "a"}}},
			&events.NamespaceDeleted{Name: "payments"},
			&events.NamespaceUpserted{Namespace: events.Namespace{Name: "payments"}},
		}, []string{
			"created (pay)\n  Name: \"\" → \"payments\"\n  Description: \"\" → \"pay\"",
			"updated: description pay → payments team; meta team a" +
				"\n  Description: \"pay\" → \"payments team\"\n  Meta[team]: \"\" → \"a\"",
			"applied again, no change",
			"deleted",
			"created\n  Name: \"\" → \"payments\"",
		}},
		{"server life", events.KindServer, "s1", []events.Payload{
			&events.ServerRegistered{ID: "s1", RaftAddr: "10.0.0.1:4647", HTTPAddr: "10.0.0.1:4646"},
			&events.ServerRegistered{ID: "s1", RaftAddr: "10.0.0.2:4647", HTTPAddr: "10.0.0.1:4646"},
			&events.ServerRegistered{ID: "s1", RaftAddr: "10.0.0.2:4647", HTTPAddr: "10.0.0.1:4646"},
			&events.SnapshotRestored{Server: "s1", Index: 4107, SnapshotIndex: 10, ClusterID: "c1", SavedBy: "s2", Rows: 46, Checksum: "4b38"},
			&events.ServerRemoved{ID: "s1"},
		}, []string{
			"joined (raft 10.0.0.1:4647, http 10.0.0.1:4646)\n  RaftAddr: \"\" → \"10.0.0.1:4647\"\n  HTTPAddr: \"\" → \"10.0.0.1:4646\"",
			"registered again: raft 10.0.0.1:4647 → 10.0.0.2:4647\n  RaftAddr: \"10.0.0.1:4647\" → \"10.0.0.2:4647\"",
			"registered again, no change",
			"restored the state saved at index 10 (cluster c1, saved by s2; 46 rows, SHA-256 4b38), installed at index 4107",
			"removed from the raft configuration",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := fold(t, tc.kind, tc.id, tc.events...)
			for i := range max(len(got), len(tc.want)) {
				var g, w string
				if i < len(got) {
					g = got[i]
				}
				if i < len(tc.want) {
					w = tc.want[i]
				}
				if g != w {
					t.Errorf("event %d (%T):\ngot:\n%s\nwant:\n%s", i+1, tc.events[min(i, len(tc.events)-1)], g, w)
				}
			}
		})
	}
}

// TestEveryTypeIsSummarised checks that every registered event type has
// its own summariser, and that its sample summarises without a decode
// error from every entity it touches.
func TestEveryTypeIsSummarised(t *testing.T) {
	samples := eventstest.Samples()
	for _, typ := range events.Types() {
		if strings.HasPrefix(typ.Name, "SummaryTest") {
			continue
		}
		if !summary.Known(typ.Name) {
			t.Errorf("%s has no summariser (it would get the generic fallback)", typ.Name)
		}
		p, ok := samples[typ.Name]
		if !ok {
			t.Errorf("%s has no sample in eventstest", typ.Name)
			continue
		}
		ev := eventstest.New(t, "ev", p)
		for _, k := range ev.Keys {
			id := k.Value
			if k.Kind == events.KindJob {
				id = ev.Key(events.KindNamespace) + "/" + k.Value
			}
			l := summary.NewTracker(k.Kind, id).Next(&ev)
			if l.Summary == "" || strings.Contains(l.Summary, "cannot decode") || strings.Contains(l.Summary, "not in it") {
				t.Errorf("%s seen from %s %s: %q", typ.Name, k.Kind, id, l.Summary)
			}
		}
	}
}

// testPayload is a payload of event types registered by this test only.
type testPayload struct {
	Name   string `msgpack:"n" json:"Name"`
	Secret string `msgpack:"s" json:"Secret"`
}

func (p *testPayload) EntityKeys() []events.Key { return []events.Key{{Kind: "widget", Value: p.Name}} }

type secretPayload struct{ testPayload }

func init() {
	events.Register(events.Type{Name: "SummaryTestPlain", Version: 1, Topic: "Test",
		New: func() events.Payload { return new(testPayload) }})
	events.Register(events.Type{Name: "SummaryTestSecret", Version: 1, Topic: "Test", Sensitive: []string{"Secret"},
		New: func() events.Payload { return new(secretPayload) }})
}

func TestGenericFallback(t *testing.T) {
	plain := eventstest.New(t, "ev1", &testPayload{Name: "w1", Secret: "visible"})
	secret := eventstest.New(t, "ev2", &secretPayload{testPayload{Name: "w1", Secret: "hunter2"}})
	big := eventstest.New(t, "ev3", &testPayload{Name: "w1", Secret: strings.Repeat("é", 400)})
	future := plain
	future.Type = "SummaryTestFromTheFuture"
	tr := summary.NewTracker("widget", "w1")
	for _, tc := range []struct {
		ev   *events.Event
		want string
	}{
		{&plain, `SummaryTestPlain {"Name":"w1","Secret":"visible"}`},
		{&secret, `SummaryTestSecret {"Name":"w1","Secret":"<redacted>"}`},
		{&future, `SummaryTestFromTheFuture v1 (decode "SummaryTestFromTheFuture": ordo: unknown event type)`},
	} {
		l := tr.Next(tc.ev)
		if l.Summary != tc.want || len(l.Changes) != 0 {
			t.Errorf("%s: %q %v, want %q", tc.ev.Type, l.Summary, l.Changes, tc.want)
		}
	}
	l := tr.Next(&big)
	if !strings.HasSuffix(l.Summary, "…") || len(l.Summary) > 450 || !utf8.ValidString(l.Summary) {
		t.Errorf("a long payload is not cut cleanly: %d bytes %q", len(l.Summary), l.Summary)
	}
	if summary.Known("SummaryTestPlain") {
		t.Error("a test type has a summariser")
	}
}
