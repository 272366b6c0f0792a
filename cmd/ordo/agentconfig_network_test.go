package main

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ordoplane/ordo/client"
	"github.com/ordoplane/ordo/cmd/agent"
	"github.com/ordoplane/ordo/events"
)

// TestClientNetworkBlock: the client block's network_interface, dynamic
// port range, reserved block, host_network and host_volume blocks, as
// Nomad writes them, reach the client role's configuration; an interface
// in the file replaces a dev agent's loopback address; unknown attributes
// are errors.
func TestClientNetworkBlock(t *testing.T) {
	src := `client {
  enabled           = true
  network_interface = "eth0"
  min_dynamic_port  = 25000
  max_dynamic_port  = 26000
  reserved {
    cpu            = 500
    memory         = 256
    reserved_ports = "22,80,8000-8100"
  }
  host_network "public" {
    cidr           = "203.0.113.0/24"
    reserved_ports = "443"
  }
  host_network "lo" {
    interface = "lo"
  }
  host_volume "data" {
    path = "/srv/data"
  }
  host_volume "certs" {
    path      = "/etc/certs"
    read_only = true
  }
}
`
	path := filepath.Join(t.TempDir(), "agent.hcl")
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := loadAgentFile(path)
	if err != nil {
		t.Fatal(err)
	}
	c := agent.Config{Client: agent.DevClientConfig()}
	if c.Client.NetworkAddress != "127.0.0.1" {
		t.Fatalf("a dev agent's client advertises %q, want 127.0.0.1", c.Client.NetworkAddress)
	}
	if err := f.applyTo(&c); err != nil {
		t.Fatal(err)
	}
	cc := c.Client
	if cc.NetworkInterface != "eth0" || cc.NetworkAddress != "" {
		t.Errorf("interface %q address %q", cc.NetworkInterface, cc.NetworkAddress)
	}
	if cc.MinDynamicPort != 25000 || cc.MaxDynamicPort != 26000 || cc.ReservedPorts != "22,80,8000-8100" {
		t.Errorf("ports %d-%d reserved %q", cc.MinDynamicPort, cc.MaxDynamicPort, cc.ReservedPorts)
	}
	if cc.Reserved != (events.NodeResources{CPU: 500, MemoryMB: 256}) {
		t.Errorf("reserved %+v", cc.Reserved)
	}
	wantNets := []client.HostNetwork{{Name: "public", CIDR: "203.0.113.0/24", ReservedPorts: "443"}, {Name: "lo", Interface: "lo"}}
	if !reflect.DeepEqual(cc.HostNetworks, wantNets) {
		t.Errorf("host networks %+v", cc.HostNetworks)
	}
	wantVols := []client.HostVolume{{Name: "data", Path: "/srv/data"}, {Name: "certs", Path: "/etc/certs", ReadOnly: true}}
	if !reflect.DeepEqual(cc.HostVolumes, wantVols) {
		t.Errorf("host volumes %+v", cc.HostVolumes)
	}

	for _, bad := range []struct{ src, want string }{
		{"client {\n host_volume \"x\" {}\n}\n", "path"},
		{"client {\n host_network \"x\" {\n cidrs = \"10.0.0.0/8\"\n }\n}\n", "cidrs"},
		{"client {\n min_dynamic_port = \"low\"\n}\n", "a number is required"},
	} {
		p := filepath.Join(t.TempDir(), "agent.hcl")
		if err := os.WriteFile(p, []byte(bad.src), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := loadAgentFile(p); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%q: err %v, want one naming %s", bad.src, err, bad.want)
		}
	}
}
