package httpapi_test

import (
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"

	"github.com/ordoplane/ordo/events"
)

// TestNodesWithNomadClient reads and changes nodes with the nomad/api Go
// client's Nodes() endpoints.
func TestNodesWithNomadClient(t *testing.T) {
	t.Parallel()
	d := startAgent(t)
	const id = "9d2c7e1a-3f4b-4c5d-8e6f-7a8b9c0d1e2f"
	d.register(t, id)
	d.nodeWrite(t, "PUT", "/v1/client/"+id+"/heartbeat", `{}`)
	c, err := api.NewClient(&api.Config{Address: d.base})
	if err != nil {
		t.Fatal(err)
	}
	nc := c.Nodes()

	list, qm, err := nc.List(nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].ID != id || list[0].Status != events.NodeStatusReady || list[0].Datacenter != "dc1" ||
		list[0].SchedulingEligibility != "eligible" || !list[0].Drivers["exec"].Healthy || qm.LastIndex == 0 {
		t.Fatalf("List = %+v (%+v)", list, qm)
	}
	if l, _, err := nc.PrefixList(id[:4]); err != nil || len(l) != 1 {
		t.Fatalf("PrefixList = %v, %v", l, err)
	}
	n, _, err := nc.Info(id, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n.Name != "client-1" || n.NodeClass != "compute" || n.NodePool != "default" || *n.Resources.CPU != 4000 ||
		*n.Resources.MemoryMB != 8192 || n.Attributes["kernel.name"] != "linux" || n.StatusUpdatedAt == 0 || n.HTTPAddr != "10.1.2.3:4646" {
		t.Fatalf("Info = %+v", n)
	}

	// A blocking List wakes on the eligibility change.
	woke := make(chan uint64, 1)
	go func() {
		_, qm, err := nc.List(&api.QueryOptions{WaitIndex: qm.LastIndex, WaitTime: 10 * time.Second})
		if err != nil {
			woke <- 0
			return
		}
		woke <- qm.LastIndex
	}()
	er, err := nc.ToggleEligibility(id, false, nil)
	if err != nil || er.NodeModifyIndex == 0 {
		t.Fatalf("ToggleEligibility = %+v, %v", er, err)
	}
	select {
	case idx := <-woke:
		if idx < er.NodeModifyIndex {
			t.Fatalf("blocking List woke at %d, want >= %d", idx, er.NodeModifyIndex)
		}
	case <-time.After(testTimeout):
		t.Fatal("blocking List never woke")
	}

	dr, err := nc.UpdateDrain(id, &api.DrainSpec{Deadline: time.Hour, IgnoreSystemJobs: true}, false, nil)
	if err != nil || dr.NodeModifyIndex == 0 {
		t.Fatalf("UpdateDrain = %+v, %v", dr, err)
	}
	n, _, err = nc.Info(id, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !n.Drain || n.DrainStrategy == nil || n.DrainStrategy.Deadline != time.Hour || !n.DrainStrategy.IgnoreSystemJobs ||
		n.DrainStrategy.ForceDeadline.Sub(n.DrainStrategy.StartedAt) != time.Hour || n.SchedulingEligibility != "ineligible" {
		t.Fatalf("draining Info = %+v (strategy %+v)", n, n.DrainStrategy)
	}
	if _, err := nc.UpdateDrain(id, nil, true, nil); err != nil {
		t.Fatal(err)
	}
	if n, _, err = nc.Info(id, nil); err != nil || n.Drain || n.SchedulingEligibility != "eligible" {
		t.Fatalf("after drain stop: %+v, %v", n, err)
	}
	if _, _, err := nc.Purge(id, nil); err != nil {
		t.Fatal(err)
	}
	if _, _, err := nc.Info(id, nil); err == nil {
		t.Fatal("Info of a purged node succeeded")
	}
}
