package node_test

import (
	"reflect"
	"testing"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/commands/commandstest"
	"github.com/ordoplane/ordo/commands/node"
	"github.com/ordoplane/ordo/events"
)

// withPorts is a registration with addresses, a port range, reserved
// ports and a host volume.
func withPorts(id string) events.Node {
	n := regNode(id)
	n.Networks = []events.NodeNetwork{{Name: "default", Address: "10.0.0.1", Device: "eth0"}, {Name: "public", Address: "203.0.113.9"}}
	n.MinDynamicPort, n.MaxDynamicPort, n.ReservedPorts = 25000, 26000, "22,8000-8100"
	n.HostVolumes = map[string]*events.ClientHostVolume{"data": {Name: "data", Path: "/srv/data", ReadOnly: true}}
	return n
}

// A node's addresses, port range, reserved ports and host volumes are
// checked at registration, naming the field; a registration repeating
// them appends nothing, one changing them registers again.
func TestRegisterPorts(t *testing.T) {
	for _, tc := range []struct {
		name  string
		edit  func(*events.Node)
		field string
	}{
		{"valid", func(*events.Node) {}, ""},
		{"bad address", func(n *events.Node) { n.Networks[1].Address = "public" }, "NodeNetworks"},
		{"duplicate network", func(n *events.Node) { n.Networks[1].Name = "default" }, "NodeNetworks"},
		{"range reversed", func(n *events.Node) { n.MinDynamicPort = 27000 }, "MinDynamicPort"},
		{"range too high", func(n *events.Node) { n.MaxDynamicPort = 70000 }, "MinDynamicPort"},
		{"bad reserved", func(n *events.Node) { n.ReservedPorts = "22,ssh" }, "ReservedHostPorts"},
		{"volume without path", func(n *events.Node) { n.HostVolumes["data"].Path = "" }, "HostVolumes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := withPorts("n1")
			tc.edit(&n)
			err := node.Register{Node: n}.Validate()
			if tc.field == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			commandstest.WantField(t, err, tc.field)
			if commands.Status(err) != 400 {
				t.Fatalf("Status = %d", commands.Status(err))
			}
		})
	}

	first := withPorts("n1")
	first.NodePool, first.Status = node.DefaultPool, events.NodeStatusReady
	c := newCluster(t, &events.NodeRegistered{Node: first})
	got, err := node.Register{Node: withPorts("n1")}.Decide(c.View(), now, noIDs)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, commands.Decision{}) {
		t.Fatalf("an unchanged registration decided %#v", got)
	}
	moved := withPorts("n1")
	moved.HostVolumes = map[string]*events.ClientHostVolume{"logs": {Name: "logs", Path: "/srv/logs"}}
	got, err = node.Register{Node: moved}.Decide(c.View(), now, noIDs)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Events) != 1 {
		t.Fatalf("a registration with another host volume decided %#v", got)
	}
}
