package nodepool_test

import (
	"errors"
	"testing"
	"time"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/commandstest"
	"github.com/ordoplane/ordo/commands/nodepool"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections/nodepools"
)

func decide(t *testing.T, c *commandstest.Cluster, cmd commands.Command) (commands.Decision, error) {
	t.Helper()
	if err := cmd.Validate(); err != nil {
		return commands.Decision{}, err
	}
	return cmd.Decide(c.View(), time.Unix(1, 0), commandstest.SequentialIDs())
}

func TestApplyAndDelete(t *testing.T) {
	c := commandstest.NewCluster(t)
	dec, err := decide(t, c, nodepool.Apply{Name: "gpu", Description: "GPU machines", Meta: map[string]string{"team": "ml"}})
	if err != nil {
		t.Fatal(err)
	}
	if res := c.Apply(dec); res.Err != nil {
		t.Fatal(res.Err)
	}
	p, err := nodepools.Get(c.View(), "gpu")
	if err != nil || p.Description != "GPU machines" || p.Meta["team"] != "ml" || p.CreateIndex != 1 {
		t.Fatalf("gpu = %+v, %v", p, err)
	}
	list, err := nodepools.List(c.View(), "")
	if err != nil || len(list) != 3 || list[0].Name != "all" || list[1].Name != "default" || list[2].Name != "gpu" {
		t.Fatalf("list = %+v, %v", list, err)
	}

	// A node in the pool keeps it from being deleted, at decision and at apply.
	del, err := decide(t, c, nodepool.Delete{Name: "gpu"})
	if err != nil {
		t.Fatal(err)
	}
	reg := commands.Decision{Events: []events.Payload{&events.NodeRegistered{Node: events.Node{ID: "n1", Name: "n1",
		Datacenter: "dc1", NodePool: "gpu", Status: "ready"}}}}
	if res := c.Apply(reg); res.Err != nil {
		t.Fatal(res.Err)
	}
	if res := c.Apply(del); res.Err == nil {
		t.Fatal("a delete decided before a node joined the pool applied")
	}
	if _, err := decide(t, c, nodepool.Delete{Name: "gpu"}); !errors.As(err, new(*commands.ConflictError)) {
		t.Fatalf("delete of a pool in use: %v", err)
	}

	// A node registering in an unknown pool creates it, as Nomad's servers do.
	reg = commands.Decision{Events: []events.Payload{&events.NodeRegistered{Node: events.Node{ID: "n2", Name: "n2",
		Datacenter: "dc1", NodePool: "arm", Status: "ready"}}}}
	if res := c.Apply(reg); res.Err != nil {
		t.Fatal(res.Err)
	}
	if p, err := nodepools.Get(c.View(), "arm"); err != nil || p.Name != "arm" {
		t.Fatalf("arm = %+v, %v", p, err)
	}
	if _, err := decide(t, c, nodepool.Delete{Name: "missing"}); !errors.As(err, new(*commands.NotFoundError)) {
		t.Fatalf("delete of a missing pool: %v", err)
	}
}

func TestBuiltInPoolsAndNames(t *testing.T) {
	c := commandstest.NewCluster(t)
	for _, cmd := range []commands.Command{
		nodepool.Apply{Name: "default"}, nodepool.Apply{Name: "all"},
		nodepool.Delete{Name: "default"}, nodepool.Delete{Name: "all"},
		nodepool.Apply{Name: "bad name"}, nodepool.Apply{Name: ""},
	} {
		if _, err := decide(t, c, cmd); !errors.As(err, new(*commands.ValidationError)) {
			t.Errorf("%+v: %v, want a validation error", cmd, err)
		}
	}
	for _, name := range []string{"default", "all"} {
		if p, err := nodepools.Get(c.View(), name); err != nil || p.Name != name {
			t.Errorf("built-in %s = %+v, %v", name, p, err)
		}
	}
}
