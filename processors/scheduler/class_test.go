package scheduler

import (
	"testing"

	"github.com/ordoplane/ordo/events"
)

func TestEscapesClass(t *testing.T) {
	con := func(l, op, r string) events.Constraint { return events.Constraint{LTarget: l, Operand: op, RTarget: r} }
	for _, tc := range []struct {
		name       string
		job, group []events.Constraint
		want       bool
	}{
		{"none", nil, nil, false},
		{"attribute", []events.Constraint{con("${attr.kernel.name}", "=", "linux")}, nil, false},
		{"meta, class, datacenter, pool", nil, []events.Constraint{con("${meta.rack}", "=", "r1"),
			con("${node.class}", "=", "big"), con("${node.datacenter}", "=", "dc1"), con("${node.pool}", "=", "default")}, false},
		{"unique node name", []events.Constraint{con("${node.unique.name}", "!=", "n1")}, nil, true},
		{"unique attribute on the right", nil, []events.Constraint{con("10.0.0.1", "=", "${attr.unique.network.ip-address}")}, true},
		{"unique meta", nil, []events.Constraint{con("${meta.unique.serial}", "is_set", "")}, true},
		{"distinct hosts", []events.Constraint{{Operand: events.ConstraintDistinctHosts, RTarget: "true"}}, nil, true},
		{"distinct property", nil, []events.Constraint{{Operand: "distinct_property", LTarget: "${meta.rack}"}}, true},
	} {
		job := &events.Job{Constraints: tc.job, TaskGroups: []events.TaskGroup{{Name: "a"}, {Name: "b", Constraints: tc.group}}}
		if got := escapesClass(job); got != tc.want {
			t.Errorf("%s: escapesClass = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestClassEligibilityByComputedClass: nodes that differ only in what
// feasibility ignores (name, resources, unique attributes) share a class;
// a class is eligible when any group is feasible on it.
func TestClassEligibilityByComputedClass(t *testing.T) {
	st := NewMemState()
	node := func(id, kernel string, cpu int) *Node {
		return &Node{ID: id, Name: id, Datacenter: "dc1", NodePool: "default", NodeClass: "c",
			Status: events.NodeStatusReady, SchedulingEligibility: events.NodeEligible,
			Attributes: map[string]string{"kernel.name": kernel, "unique.hostname": id},
			Resources:  events.NodeResources{CPU: cpu, MemoryMB: 1024},
			Drivers:    map[string]events.DriverInfo{"exec": {Detected: true, Healthy: true}}}
	}
	for _, n := range []*Node{node("l1", "linux", 1000), node("l2", "linux", 2000), node("w1", "windows", 1000)} {
		st.UpsertNode(n)
	}
	task := []events.Task{{Name: "t", Driver: "exec", Resources: &events.Resources{CPU: 5000, MemoryMB: 10}}}
	job := &events.Job{ID: "j", Namespace: "default", Type: events.JobTypeService, Priority: 50, NodePool: "default",
		Datacenters: []string{"dc1"}, TaskGroups: []events.TaskGroup{
			{Name: "linux", Count: 1, Tasks: task, Constraints: []events.Constraint{{LTarget: "${attr.kernel.name}", Operand: "=", RTarget: "linux"}}},
			{Name: "mac", Count: 1, Tasks: task, Constraints: []events.Constraint{{LTarget: "${attr.kernel.name}", Operand: "=", RTarget: "darwin"}}},
		}}
	st.UpsertJob(job)
	st.SetIndex(3)
	plan, err := Compute(st, &events.Evaluation{ID: "e1", Namespace: "default", JobID: "j", Type: events.JobTypeService,
		Priority: 50, Status: events.EvalStatusPending, TriggeredBy: events.EvalTriggerJobRegister})
	if err != nil {
		t.Fatal(err)
	}
	class := func(id string) string {
		n, _ := st.Node(id)
		return events.ComputedClass(n.Datacenter, n.NodeClass, n.NodePool, n.Attributes, n.Meta, n.Drivers, n.HostVolumes)
	}
	if class("l1") != class("l2") || class("l1") == class("w1") {
		t.Fatalf("classes l1 %s l2 %s w1 %s", class("l1"), class("l2"), class("w1"))
	}
	want := map[string]bool{class("l1"): true, class("w1"): false}
	if !plan.CreateBlockedEval || plan.EscapedComputedClass || len(plan.ClassEligibility) != 2 ||
		plan.ClassEligibility[class("l1")] != true || plan.ClassEligibility[class("w1")] != false {
		t.Fatalf("blocked %v escaped %v eligibility %v, want %v", plan.CreateBlockedEval, plan.EscapedComputedClass,
			plan.ClassEligibility, want)
	}
}
