package node_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/commandstest"
	"github.com/ordoplane/ordo/commands/node"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/fsm"
)

// TestN1ReconnectOrdering: a node that missed a heartbeat while running
// disconnect-tolerant allocations is disconnected; its client then makes
// its usual reconnect calls — register, status ready, alloc update — in any
// order. Register never changes its status, and it is never ready before
// its last alloc update index is past its last missed heartbeat index.
// Each ordering runs twice: with every call decided just before it applies,
// and with every call decided on the same snapshot (all racing), where the
// preconditions must refuse what went stale.
func TestN1ReconnectOrdering(t *testing.T) {
	for _, racing := range []bool{false, true} {
		for _, order := range commandstest.Permutations([]string{"register", "ready", "allocs"}) {
			name := strings.Join(order, ",")
			if racing {
				name = "racing/" + name
			}
			t.Run(name, func(t *testing.T) { checkReconnect(t, order, racing) })
		}
	}
}

func checkReconnect(t *testing.T, order []string, racing bool) {
	c := newCluster(t, registered("n", events.NodeStatusReady))
	c.run(node.UpdateStatus{ID: "n", Status: events.NodeStatusDisconnected, MissedHeartbeat: true})
	missed := c.node("n").LastMissedHeartbeatIndex
	if missed == 0 {
		t.Fatal("missed heartbeat index not recorded")
	}
	rereg := regNode("n")
	rereg.Status = events.NodeStatusReady
	rereg.Attributes = map[string]string{"restarted": "true"}
	cmds := map[string]commands.Command{
		"register": node.Register{Node: rereg},
		"ready":    node.UpdateStatus{ID: "n", Status: events.NodeStatusReady},
	}
	decide := func(step string, v projections.View) commands.Decision {
		t.Helper()
		if step == "allocs" {
			// The alloc slice's update-allocs command appends this marker.
			return commands.Decision{Events: []events.Payload{&events.NodeAllocsUpdated{ID: "n"}}}
		}
		dec, err := cmds[step].Decide(v, now, noIDs)
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		return dec
	}
	var decided map[string]commands.Decision
	if racing {
		v := c.View()
		decided = map[string]commands.Decision{}
		for _, step := range order {
			decided[step] = decide(step, v)
		}
	}
	allocsApplied := false
	for _, step := range order {
		before := c.node("n")
		dec := decided[step]
		if !racing {
			dec = decide(step, c.View())
		}
		if len(dec.Events) > 0 {
			res := c.Apply(dec)
			var re *fsm.RejectedError
			if res.Err != nil && !errors.As(res.Err, &re) {
				t.Fatalf("%s: %v", step, res.Err)
			}
			if res.Err == nil && step == "allocs" {
				allocsApplied = true
			}
		}
		after := c.node("n")
		if step == "register" && after.Status != before.Status {
			t.Fatalf("register changed status %s -> %s", before.Status, after.Status)
		}
		if after.Status == events.NodeStatusReady && (!allocsApplied || after.LastAllocUpdateIndex <= missed) {
			t.Fatalf("after %s: ready before its allocs were updated (alloc update index %d, missed heartbeat index %d)",
				step, after.LastAllocUpdateIndex, missed)
		}
	}
	// The client keeps heartbeating; once its allocs are in, it is ready.
	if !allocsApplied {
		c.Apply(decide("allocs", c.View()))
	}
	for range 2 {
		c.run(node.UpdateStatus{ID: "n", Status: events.NodeStatusReady})
	}
	n := c.node("n")
	if n.Status != events.NodeStatusReady || n.LastMissedHeartbeatIndex != 0 || n.Attributes["restarted"] != "true" {
		t.Fatalf("final node = %+v", n)
	}
}

// TestN1StaleReadyAfterNewMiss: a ready decided while the node had updated
// its allocs must not land after the node missed another heartbeat.
func TestN1StaleReadyAfterNewMiss(t *testing.T) {
	c := newCluster(t, registered("n", events.NodeStatusReady))
	c.run(node.UpdateStatus{ID: "n", Status: events.NodeStatusDisconnected, MissedHeartbeat: true})
	c.run(node.UpdateStatus{ID: "n", Status: events.NodeStatusReady})
	c.Apply(commands.Decision{Events: []events.Payload{&events.NodeAllocsUpdated{ID: "n"}}})
	stale, err := node.UpdateStatus{ID: "n", Status: events.NodeStatusReady}.Decide(c.View(), now, noIDs)
	if err != nil || len(stale.Events) != 1 || stale.Events[0].(*events.NodeStatusUpdated).Status != events.NodeStatusReady {
		t.Fatalf("decision = %#v, %v", stale, err)
	}
	c.run(node.UpdateStatus{ID: "n", Status: events.NodeStatusDisconnected, MissedHeartbeat: true})
	if res := c.Apply(stale); res.Err == nil {
		t.Fatal("a ready decided before the node missed a heartbeat again was applied")
	}
	if n := c.node("n"); n.Status != events.NodeStatusDisconnected {
		t.Fatalf("status = %s", n.Status)
	}
}
