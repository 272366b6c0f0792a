package compat

import (
	"slices"
	"testing"

	"github.com/hashicorp/nomad/api"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/test/testagent"
)

// TestAllocatedPortsWithNomadClient: a job whose group asks for a static
// and a dynamic port, registered with the nomad/api client, is placed on
// the dev agent's node, which advertises 127.0.0.1; the allocation read
// back with Allocations().Info carries Nomad's AllocatedResources.Shared
// shapes: the ports with their host IP, and the network with its address,
// the static port as asked and the dynamic one drawn from the node's range.
func TestAllocatedPortsWithNomadClient(t *testing.T) {
	_, c, nodeID := startDevClient(t)
	node, _, err := c.Nodes().Info(nodeID, nil)
	if err != nil {
		t.Fatal(err)
	}
	j := testagent.SleepJob("service", "ports", 1, 100)
	j.TaskGroups[0].Networks = []*api.NetworkResource{{
		Mode:          "host",
		ReservedPorts: []api.Port{{Label: "admin", Value: 19876}},
		DynamicPorts:  []api.Port{{Label: "http"}},
	}}
	testagent.Register(t, c, j)
	var stub *api.AllocationListStub
	testagent.WaitFor(t, clientTimeout, "the allocation placed", func() bool {
		list, _, err := c.Jobs().Allocations("ports", false, nil)
		if err != nil || len(list) != 1 {
			return false
		}
		stub = list[0]
		return true
	})
	alloc, _, err := c.Allocations().Info(stub.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	ar := alloc.AllocatedResources
	if ar == nil {
		t.Fatalf("allocation %s has no AllocatedResources", alloc.ID)
	}
	ports := slices.Clone(ar.Shared.Ports)
	slices.SortFunc(ports, func(a, b api.PortMapping) int { return a.Value - b.Value })
	if len(ports) != 2 || ports[0].Label != "admin" || ports[0].Value != 19876 || ports[0].HostIP != "127.0.0.1" ||
		ports[1].Label != "http" || ports[1].Value < events.DefaultMinDynamicPort || ports[1].Value > events.DefaultMaxDynamicPort ||
		ports[1].HostIP != "127.0.0.1" {
		t.Fatalf("Shared.Ports = %+v", ar.Shared.Ports)
	}
	if len(ar.Shared.Networks) != 1 {
		t.Fatalf("Shared.Networks = %+v", ar.Shared.Networks)
	}
	nw := ar.Shared.Networks[0]
	if nw.Mode != "host" || nw.IP != "127.0.0.1" || len(nw.ReservedPorts) != 1 || nw.ReservedPorts[0].Value != 19876 ||
		len(nw.DynamicPorts) != 1 || nw.DynamicPorts[0].Label != "http" || nw.DynamicPorts[0].Value != ports[1].Value {
		t.Fatalf("Shared.Networks[0] = %+v", nw)
	}
	if node.Attributes["unique.network.ip-address"] != "127.0.0.1" {
		t.Errorf("node attribute unique.network.ip-address = %q", node.Attributes["unique.network.ip-address"])
	}

	// A second job asking for the same static port cannot be placed on the
	// one node: the eval's metrics say why.
	j2 := testagent.SleepJob("service", "ports2", 1, 100)
	j2.TaskGroups[0].Networks = []*api.NetworkResource{{ReservedPorts: []api.Port{{Label: "admin", Value: 19876}}}}
	resp, _, err := c.Jobs().Register(j2, nil)
	if err != nil {
		t.Fatal(err)
	}
	var ev *api.Evaluation
	testagent.WaitFor(t, clientTimeout, "the second job's eval", func() bool {
		ev, _, err = c.Evaluations().Info(resp.EvalID, nil)
		return err == nil && ev.Status == "complete"
	})
	m := ev.FailedTGAllocs["ports2"]
	if m == nil || m.DimensionExhausted["network: reserved port collision admin=19876"] != 1 {
		t.Fatalf("FailedTGAllocs = %+v", ev.FailedTGAllocs)
	}
}
