package main

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/ordoplane/ordo/client/serverapi"
	"github.com/ordoplane/ordo/cmd/agent"
	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/services"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/allocs"
)

// c1mPorts is the C1M run twice on one machine, in one invocation: the
// plain jobs, then jobs whose every allocation asks for one dynamic port
// and has one service with an http check. On the second it then registers
// every allocation's service instance as the nodes' clients would (one
// call per node), and measures how soon a blocking read of one service
// (what a template's nomadService waits on) wakes after an instance of it
// changes.
func c1mPorts(nodeCount, jobCount, perJob, workers int) ([]row, error) {
	plain, err := c1mRun(nodeCount, jobCount, perJob, workers, plainC1MJob, nil)
	if err != nil {
		return nil, fmt.Errorf("plain run: %w", err)
	}
	ports, err := c1mRun(nodeCount, jobCount, perJob, workers, portsC1MJob, func(a *agent.Agent) ([]row, error) {
		return serviceFigures(a, jobCount*perJob)
	})
	if err != nil {
		return nil, fmt.Errorf("ports run: %w", err)
	}
	plainRate, portsRate := plain[0].value, ports[0].value
	label := fmt.Sprintf("%d nodes, %d jobs × %d", nodeCount, jobCount, perJob)
	rows := []row{
		{"c1m plain: allocations placed, " + label, plainRate, "allocs/s"},
		{"c1m with a port and a checked service each: allocations placed, " + label, portsRate, "allocs/s"},
		{"c1m with ports and services: plans committed in part", ports[3].value, "plans"},
		{"ports and services cost (placement rate lost)", 100 * (1 - portsRate/plainRate), "%"},
	}
	return append(rows, ports[len(plain):]...), nil
}

// portsC1MJob is job i of the ports run: each allocation asks for one
// dynamic port, and its group has one service on it with an http check.
func portsC1MJob(i, perJob int) string {
	return fmt.Sprintf(`job "c1m-%03d" {
  datacenters = ["dc1"]
  group "g" {
    count = %d
    network {
      port "http" {}
    }
    service {
      name = "c1m-%03d"
      port = "http"
      check {
        type     = "http"
        path     = "/health"
        interval = "10s"
        timeout  = "2s"
      }
    }
    task "t" {
      driver = "exec"
      config { command = "/bin/true" }
      resources {
        cpu    = 100
        memory = 64
      }
    }
  }
}`, i, perJob, i)
}

// serviceFigures registers a service instance for each of the want
// placed allocations, a call per node as clients make them, then measures
// the wake-up of blocking reads of one service over HTTP.
func serviceFigures(a *agent.Agent, want int) ([]row, error) {
	byNode := map[string][]events.ServiceRegistration{}
	snap := a.Store().Snapshot()
	err := allocs.Scan(projections.NewView(snap), allocs.Query{}, func(al *allocs.Alloc) error {
		ports := al.AllocatedResources.Ports()
		if len(ports) != 1 {
			return fmt.Errorf("allocation %s holds %d ports, want 1", al.ID, len(ports))
		}
		byNode[al.NodeID] = append(byNode[al.NodeID], events.ServiceRegistration{
			ID: "_nomad-task-" + al.ID + "-group-g-" + al.JobID + "-http", ServiceName: al.JobID,
			Namespace: al.Namespace, NodeID: al.NodeID, Datacenter: "dc1", JobID: al.JobID, AllocID: al.ID,
			Address: ports[0].HostIP, Port: ports[0].Value})
		return nil
	})
	snap.Close()
	if err != nil {
		return nil, err
	}
	nodes := make([]string, 0, len(byNode))
	total := 0
	for n, regs := range byNode {
		nodes = append(nodes, n)
		total += len(regs)
	}
	if total != want {
		return nil, fmt.Errorf("%d allocations to register, want %d", total, want)
	}
	slices.Sort(nodes)
	ctx := context.Background()
	req := commands.Request{Actor: "bench"}
	start := time.Now()
	err = parallel(64, len(nodes), func(i int) error {
		_, err := a.Pipeline().Run(ctx, "service.register", req, services.Register{NodeID: nodes[i], Services: byNode[nodes[i]]})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("register services: %w", err)
	}
	regRate := float64(total) / time.Since(start).Seconds()

	// One service's instances, on the first node that runs some: a blocking
	// read waits, one instance's tags change, the read wakes.
	var inst events.ServiceRegistration
	for _, r := range byNode[nodes[0]] {
		if r.ServiceName == "c1m-000" {
			inst = r
			break
		}
	}
	if inst.ID == "" {
		inst = byNode[nodes[0]][0]
	}
	c, err := serverapi.New([]string{a.HTTPAddr()})
	if err != nil {
		return nil, err
	}
	list, index, err := c.Service(ctx, inst.Namespace, inst.ServiceName, 0, 0)
	if err != nil {
		return nil, err
	}
	var wakes []time.Duration
	for i := range 200 {
		type woke struct {
			at    time.Time
			index uint64
			err   error
		}
		done := make(chan woke, 1)
		go func() {
			_, next, err := c.Service(ctx, inst.Namespace, inst.ServiceName, index, time.Minute)
			done <- woke{time.Now(), next, err}
		}()
		time.Sleep(5 * time.Millisecond) // the read is waiting on the server
		inst.Tags = []string{fmt.Sprintf("v%d", i)}
		sent := time.Now()
		if _, err := a.Pipeline().Run(ctx, "service.register", req, services.Register{NodeID: inst.NodeID,
			Services: []events.ServiceRegistration{inst}}); err != nil {
			return nil, err
		}
		w := <-done
		if w.err != nil {
			return nil, w.err
		}
		if w.index <= index {
			return nil, fmt.Errorf("blocking read woke at index %d, not past %d", w.index, index)
		}
		index = w.index
		wakes = append(wakes, max(0, w.at.Sub(sent)))
	}
	slices.Sort(wakes)
	return []row{
		{fmt.Sprintf("service registrations absorbed (%d, a call per node)", total), regRate, "regs/s"},
		{fmt.Sprintf("nomadService blocking read wake-up p50, from the write (%d instances of %d registrations)", len(list), total),
			percentileMS(wakes, 0.50), "ms"},
		{fmt.Sprintf("nomadService blocking read wake-up p99, from the write (%d instances of %d registrations)", len(list), total),
			percentileMS(wakes, 0.99), "ms"},
	}, nil
}
