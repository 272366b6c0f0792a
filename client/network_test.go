package client

import (
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ordoplane/ordo/events"
)

// fakeInterfaces makes the machine's interfaces those given (name →
// addresses in CIDR form) for the test.
func fakeInterfaces(t *testing.T, ifs map[string][]string) {
	t.Helper()
	old := interfaceAddrs
	t.Cleanup(func() { interfaceAddrs = old })
	interfaceAddrs = func() (map[string][]net.Addr, []string, error) {
		out := map[string][]net.Addr{}
		var names []string
		for name, cidrs := range ifs {
			names = append(names, name)
			for _, c := range cidrs {
				ip, ipn, err := net.ParseCIDR(c)
				if err != nil {
					t.Fatal(err)
				}
				ipn.IP = ip
				out[name] = append(out[name], ipn)
			}
		}
		return out, names, nil
	}
}

func TestFingerprintNetwork(t *testing.T) {
	fakeInterfaces(t, map[string][]string{
		"lo":   {"127.0.0.1/8", "::1/128"},
		"eth0": {"fe80::1/64", "10.0.0.5/24"},
		"eth1": {"192.168.7.9/24"},
	})
	vol := t.TempDir()
	for _, tc := range []struct {
		name string
		cfg  Config
		want []events.NodeNetwork
	}{
		{"first non-loopback IPv4", Config{}, []events.NodeNetwork{{Name: "default", Address: "10.0.0.5", Device: "eth0"}}},
		{"network_interface", Config{NetworkInterface: "eth1"}, []events.NodeNetwork{{Name: "default", Address: "192.168.7.9", Device: "eth1"}}},
		{"dev agent address", Config{NetworkAddress: "127.0.0.1"}, []events.NodeNetwork{{Name: "default", Address: "127.0.0.1"}}},
		{"host networks", Config{HostNetworks: []HostNetwork{{Name: "private", CIDR: "192.168.0.0/16", ReservedPorts: "9090"},
			{Name: "lo", Interface: "lo"}}},
			[]events.NodeNetwork{{Name: "default", Address: "10.0.0.5", Device: "eth0"},
				{Name: "private", Address: "192.168.7.9", Device: "eth1"}, {Name: "lo", Address: "127.0.0.1", Device: "lo"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var n events.Node
			if err := tc.cfg.fingerprintNetwork(&n); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(n.Networks, tc.want) {
				t.Fatalf("networks %+v, want %+v", n.Networks, tc.want)
			}
			if n.MinDynamicPort != events.DefaultMinDynamicPort || n.MaxDynamicPort != events.DefaultMaxDynamicPort {
				t.Errorf("dynamic range %d-%d, want Nomad's defaults", n.MinDynamicPort, n.MaxDynamicPort)
			}
			if got := n.Attributes["unique.network.ip-address"]; got != tc.want[0].Address {
				t.Errorf("unique.network.ip-address %q, want %q", got, tc.want[0].Address)
			}
		})
	}

	cfg := Config{MinDynamicPort: 30000, MaxDynamicPort: 30100, ReservedPorts: "22,80",
		HostNetworks: []HostNetwork{{Name: "private", CIDR: "192.168.0.0/16", ReservedPorts: "9000-9010"}},
		HostVolumes:  []HostVolume{{Name: "data", Path: vol}, {Name: "certs", Path: vol, ReadOnly: true}}}
	if err := cfg.validateNetwork(); err != nil {
		t.Fatal(err)
	}
	var n events.Node
	if err := cfg.fingerprintNetwork(&n); err != nil {
		t.Fatal(err)
	}
	if n.MinDynamicPort != 30000 || n.MaxDynamicPort != 30100 || n.ReservedPorts != "22,80,9000-9010" {
		t.Errorf("range %d-%d reserved %q", n.MinDynamicPort, n.MaxDynamicPort, n.ReservedPorts)
	}
	if hv := n.HostVolumes["data"]; hv == nil || hv.Path != vol || hv.ReadOnly {
		t.Errorf("host volume data: %+v", hv)
	}
	if hv := n.HostVolumes["certs"]; hv == nil || !hv.ReadOnly {
		t.Errorf("host volume certs: %+v", hv)
	}

	// No address at all: loopback, so a lone machine still runs jobs.
	fakeInterfaces(t, map[string][]string{"lo": {"127.0.0.1/8"}})
	n = events.Node{}
	if err := (Config{}).fingerprintNetwork(&n); err != nil || n.Networks[0].Address != "127.0.0.1" {
		t.Fatalf("loopback only: %+v, %v", n.Networks, err)
	}
	for _, c := range []Config{{NetworkInterface: "eth9"}, {HostNetworks: []HostNetwork{{Name: "x", CIDR: "172.16.0.0/12"}}}} {
		if err := c.fingerprintNetwork(&events.Node{}); err == nil {
			t.Errorf("%+v: no error for a missing address", c)
		}
	}
}

// Bad network and host volume settings are refused when the client
// starts, each naming what is wrong.
func TestValidateNetwork(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{MinDynamicPort: 40000, MaxDynamicPort: 30000}, "min_dynamic_port 40000 is above max_dynamic_port 30000"},
		{Config{MaxDynamicPort: 70000}, "outside 1-65535"},
		{Config{ReservedPorts: "22,x"}, "reserved_ports"},
		{Config{ReservedPorts: "90-80"}, "reserved_ports"},
		{Config{NetworkAddress: "localhost"}, "not an IP address"},
		{Config{HostNetworks: []HostNetwork{{Name: "default", CIDR: "10.0.0.0/8"}}}, `host_network "default"`},
		{Config{HostNetworks: []HostNetwork{{Name: "a"}}}, "set one of cidr and interface"},
		{Config{HostNetworks: []HostNetwork{{Name: "a", CIDR: "10.0.0.0"}}}, "cidr"},
		{Config{HostVolumes: []HostVolume{{Name: "data", Path: filepath.Join(dir, "missing")}}}, `host_volume "data": path`},
		{Config{HostVolumes: []HostVolume{{Name: "data", Path: file}}}, "is not a directory"},
		{Config{HostVolumes: []HostVolume{{Name: "data", Path: "rel"}}}, "must be absolute"},
		{Config{HostVolumes: []HostVolume{{Name: "d", Path: dir}, {Name: "d", Path: dir}}}, "distinct"},
	} {
		err := tc.cfg.validateNetwork()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want one saying %q", tc.cfg, err, tc.want)
		}
	}
}
