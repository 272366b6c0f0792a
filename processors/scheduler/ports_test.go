package scheduler_test

import (
	"fmt"
	"testing"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/processors/scheduler/schedulertest"
)

// Ports given to one group of a plan are taken for the plan's other
// groups on that node: two groups asking the same static port land on
// different nodes, and dynamic ports of both groups on a node with a
// range of four ports are all distinct until the range is used up. A
// replacement whose predecessor the plan stops may take its port.
func TestPortsAcrossGroupsOfOnePlan(t *testing.T) {
	for _, tc := range []struct {
		name         string
		nodes        int
		static       bool
		perGroup     int
		wantPlaced   int
		wantDistinct bool
	}{
		{"static on two nodes", 2, true, 1, 2, true},
		{"static on one node", 1, true, 1, 1, true},
		{"dynamic range of four", 1, false, 3, 4, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := schedulertest.New()
			for i := range tc.nodes {
				n := schedulertest.Node(string(rune('a' + i)))
				n.MinDynamicPort, n.MaxDynamicPort = 30000, 30003
				n.Networks = []events.NodeNetwork{{Name: events.DefaultHostNetwork, Address: "10.0.0.1"}}
				h.State.UpsertNode(n)
			}
			j := schedulertest.Job("web", events.JobTypeService, tc.perGroup)
			tg := j.TaskGroups[0]
			tg.Tasks[0].Resources = &events.Resources{CPU: 10, MemoryMB: 10}
			nw := events.NetworkResource{Mode: events.NetworkModeHost}
			if tc.static {
				nw.ReservedPorts = []events.Port{{Label: "http", Value: 8080}}
			} else {
				nw.DynamicPorts = []events.Port{{Label: "http"}}
			}
			tg.Networks = []events.NetworkResource{nw}
			other := tg
			other.Name = "api"
			other.Tasks = []events.Task{tg.Tasks[0]}
			j.TaskGroups = []events.TaskGroup{tg, other}
			h.State.UpsertJob(j)
			h.Bump()
			p, res, err := h.Process(h.NewEval("default", "web", events.EvalTriggerJobRegister))
			if err != nil {
				t.Fatal(err)
			}
			if !res.FullCommit() {
				t.Fatalf("the plan applier refused %v: %v", res.RejectedNodes, res.Reasons)
			}
			if len(p.Placements) != tc.wantPlaced {
				t.Fatalf("placed %d, want %d (failed %v)", len(p.Placements), tc.wantPlaced, p.FailedTGAllocs)
			}
			seen := map[string]bool{}
			for _, a := range p.Placements {
				for _, pm := range a.AllocatedResources.Ports() {
					k := fmt.Sprintf("%s:%d", a.NodeID, pm.Value)
					if seen[k] {
						t.Fatalf("port %d given twice on %s", pm.Value, a.NodeID)
					}
					seen[k] = true
				}
			}
			if tc.wantPlaced < 2*tc.perGroup && len(p.FailedTGAllocs) == 0 {
				t.Fatal("placements failed without metrics")
			}
		})
	}
}

// A destructive update stops the old allocation and places its
// replacement in one plan: the replacement may take the static port the
// stopped one held on the same node.
func TestReplacementTakesStoppedAllocationsPort(t *testing.T) {
	h := schedulertest.New()
	n := schedulertest.Node("a")
	h.State.UpsertNode(n)
	j := schedulertest.Job("web", events.JobTypeService, 1)
	j.TaskGroups[0].Networks = []events.NetworkResource{{ReservedPorts: []events.Port{{Label: "http", Value: 8080}}}}
	h.State.UpsertJob(j)
	h.Bump()
	if _, _, err := h.Process(h.NewEval("default", "web", events.EvalTriggerJobRegister)); err != nil {
		t.Fatal(err)
	}
	j2 := *j
	j2.Version++
	j2.TaskGroups = []events.TaskGroup{j.TaskGroups[0]}
	j2.TaskGroups[0].Tasks = []events.Task{j.TaskGroups[0].Tasks[0]}
	j2.TaskGroups[0].Tasks[0].Config = events.TaskConfig{"command": "/bin/false"}
	h.State.UpsertJob(&j2)
	h.Bump()
	p, res, err := h.Process(h.NewEval("default", "web", events.EvalTriggerJobRegister))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Placements) != 1 || len(p.Stops) != 1 || !res.FullCommit() {
		t.Fatalf("placements %d stops %d refused %v (failed %v)", len(p.Placements), len(p.Stops), res.Reasons, p.FailedTGAllocs)
	}
	if ports := p.Placements[0].AllocatedResources.Ports(); len(ports) != 1 || ports[0].Value != 8080 {
		t.Fatalf("replacement ports %+v", ports)
	}
}
