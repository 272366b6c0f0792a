package client

import (
	"context"
	"log/slog"
	"testing"

	"github.com/hashicorp/nomad/api"

	"github.com/ordoplane/ordo/client/serverapi"
	"github.com/ordoplane/ordo/client/template"
	"github.com/ordoplane/ordo/cmd/agent"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/test/testagent"
)

// With ACLs on, a client's templates read their job's variable with the
// allocation's workload identity and no policy attached: the client
// fetches the identity of an allocation it runs (naming its node) and
// presents it; an anonymous read is refused.
func TestTemplateSourceWithWorkloadIdentity(t *testing.T) {
	t.Parallel()
	cfg := testagent.DevConfig(t.TempDir())
	cfg.ACL.Enabled = true
	cfg.Logger = slog.New(slog.DiscardHandler)
	a, err := agent.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Shutdown() })
	addr := "http://" + a.HTTPAddr()
	anon, err := api.NewClient(&api.Config{Address: addr})
	if err != nil {
		t.Fatal(err)
	}
	var boot *api.ACLToken
	testagent.WaitFor(t, examplesTimeout, "the ACL bootstrap", func() bool {
		boot, _, err = anon.ACLTokens().Bootstrap(nil)
		return err == nil
	})
	c, err := api.NewClient(&api.Config{Address: addr, SecretID: boot.SecretID})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	sa, err := serverapi.New([]string{addr})
	if err != nil {
		t.Fatal(err)
	}
	const nodeID = "7d2c1e2a-1111-4f70-8a9b-0c1d2e3f4a5b"
	node := events.Node{ID: nodeID, Name: "n1", Datacenter: "dc1", NodePool: "default",
		Attributes: map[string]string{"kernel.name": "linux"}, Resources: events.NodeResources{CPU: 4000, MemoryMB: 8192, DiskMB: 10000},
		Drivers: map[string]events.DriverInfo{"mock": {Detected: true, Healthy: true}}, Status: events.NodeStatusInitializing}
	if _, err := sa.Register(ctx, node); err != nil {
		t.Fatal(err)
	}
	if _, err := sa.Heartbeat(ctx, nodeID, events.NodeStatusReady); err != nil {
		t.Fatal(err)
	}
	testagent.WaitFor(t, examplesTimeout, "the variable written (once the first root key exists)", func() bool {
		_, _, err := c.Variables().Create(&api.Variable{Path: "nomad/jobs/greeter",
			Items: api.VariableItems{"greeting": "hello"}}, nil)
		return err == nil
	})
	job := api.NewServiceJob("greeter", "greeter", "global", 50)
	job.Datacenters = []string{"dc1"}
	job.AddTaskGroup(api.NewTaskGroup("g", 1).AddTask(api.NewTask("t", "mock").SetConfig("run_for", "1h")))
	if _, _, err := c.Jobs().Register(job, nil); err != nil {
		t.Fatal(err)
	}
	var allocID string
	testagent.WaitFor(t, examplesTimeout, "the allocation", func() bool {
		list, _, err := sa.Allocations(ctx, nodeID, 0, 0)
		if err == nil && len(list) > 0 {
			allocID = list[0].ID
		}
		return allocID != ""
	})

	src := &template.ServerSource{API: sa, NodeID: nodeID}
	q := template.Query{Namespace: "default"}
	if _, _, err := src.Variable(ctx, q, "nomad/jobs/greeter", 0, 0); err == nil {
		t.Fatal("read without an identity")
	}
	if _, err := (&template.ServerSource{API: sa, NodeID: "7d2c1e2a-2222-4f70-8a9b-0c1d2e3f4a5b"}).Identity(ctx, allocID, "t"); err == nil {
		t.Fatal("another node got the allocation's identity")
	}
	q.Token, err = src.Identity(ctx, allocID, "t")
	if err != nil {
		t.Fatal(err)
	}
	v, _, err := src.Variable(ctx, q, "nomad/jobs/greeter", 0, 0)
	if err != nil || v == nil || v.Items["greeting"] != "hello" {
		t.Fatalf("variable %+v, %v", v, err)
	}
	if metas, _, err := src.Variables(ctx, q, "nomad/jobs/greeter", 0, 0); err != nil || len(metas) != 1 {
		t.Fatalf("list %+v, %v", metas, err)
	}
	if v, _, err := src.Variable(ctx, q, "nomad/jobs/greeter/g/t", 0, 0); err != nil || v != nil {
		t.Fatalf("an absent variable: %+v, %v", v, err)
	}
}
