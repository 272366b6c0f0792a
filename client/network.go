package client

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ordoplane/ordo/events"
)

// HostNetwork is a client configuration's `host_network "name" { cidr
// interface reserved_ports }`: a further address the node offers ports on,
// the node's IPv4 address inside CIDR or the first IPv4 address of
// Interface.
type HostNetwork struct {
	Name      string
	CIDR      string
	Interface string
	// ReservedPorts are kept from allocations ("22,80,8000-8100"). Ports
	// are node resources whatever address they are on, so they join the
	// node's reserved ports.
	ReservedPorts string
}

// HostVolume is a client configuration's `host_volume "name" { path
// read_only }`: a host directory offered to jobs by name.
type HostVolume struct {
	Name     string
	Path     string
	ReadOnly bool
}

// validateNetwork reports a port range, reserved ports, host network or
// host volume that cannot work; a host volume's path must be an existing
// directory.
func (c Config) validateNetwork() error {
	if c.MinDynamicPort < 0 || c.MaxDynamicPort < 0 || c.MinDynamicPort > 65535 || c.MaxDynamicPort > 65535 {
		return fmt.Errorf("client: dynamic port range %d-%d is outside 1-65535", c.MinDynamicPort, c.MaxDynamicPort)
	}
	lo, hi := c.dynamicRange()
	if lo > hi {
		return fmt.Errorf("client: min_dynamic_port %d is above max_dynamic_port %d", lo, hi)
	}
	if _, err := events.ParsePortList(c.ReservedPorts); err != nil {
		return fmt.Errorf("client: reserved_ports: %w", err)
	}
	if c.NetworkAddress != "" && net.ParseIP(c.NetworkAddress) == nil {
		return fmt.Errorf("client: network address %q is not an IP address", c.NetworkAddress)
	}
	seen := map[string]bool{}
	for _, hn := range c.HostNetworks {
		switch {
		case hn.Name == "" || hn.Name == events.DefaultHostNetwork || seen[hn.Name]:
			return fmt.Errorf("client: host_network %q: names must be distinct and not %q", hn.Name, events.DefaultHostNetwork)
		case (hn.CIDR == "") == (hn.Interface == ""):
			return fmt.Errorf("client: host_network %q: set one of cidr and interface", hn.Name)
		}
		seen[hn.Name] = true
		if hn.CIDR != "" {
			if _, _, err := net.ParseCIDR(hn.CIDR); err != nil {
				return fmt.Errorf("client: host_network %q: cidr: %w", hn.Name, err)
			}
		}
		if _, err := events.ParsePortList(hn.ReservedPorts); err != nil {
			return fmt.Errorf("client: host_network %q: reserved_ports: %w", hn.Name, err)
		}
	}
	seen = map[string]bool{}
	for _, hv := range c.HostVolumes {
		switch {
		case hv.Name == "" || seen[hv.Name]:
			return fmt.Errorf("client: host_volume %q: names must be distinct and not empty", hv.Name)
		case !filepath.IsAbs(hv.Path):
			return fmt.Errorf("client: host_volume %q: path %q must be absolute", hv.Name, hv.Path)
		}
		seen[hv.Name] = true
		fi, err := os.Stat(hv.Path)
		if err != nil {
			return fmt.Errorf("client: host_volume %q: path %q: %w", hv.Name, hv.Path, err)
		}
		if !fi.IsDir() {
			return fmt.Errorf("client: host_volume %q: path %q is not a directory", hv.Name, hv.Path)
		}
	}
	return nil
}

// dynamicRange returns the configured dynamic port range, Nomad's
// defaults for what is unset.
func (c Config) dynamicRange() (lo, hi int) {
	lo, hi = c.MinDynamicPort, c.MaxDynamicPort
	if lo == 0 {
		lo = events.DefaultMinDynamicPort
	}
	if hi == 0 {
		hi = events.DefaultMaxDynamicPort
	}
	return lo, hi
}

// interfaceAddrs lists a machine's interfaces and their addresses; a
// variable so tests can give a machine of their own.
var interfaceAddrs = func() (map[string][]net.Addr, []string, error) {
	ifs, err := net.Interfaces()
	if err != nil {
		return nil, nil, err
	}
	out := map[string][]net.Addr{}
	var names []string
	for _, i := range ifs {
		if i.Flags&net.FlagUp == 0 {
			continue
		}
		addrs, err := i.Addrs()
		if err != nil {
			continue
		}
		out[i.Name] = addrs
		names = append(names, i.Name)
	}
	return out, names, nil
}

// errNoAddress is wrapped by the errors of fingerprintNetwork that find
// no address.
var errNoAddress = errors.New("no IPv4 address")

// fingerprintNetwork fills node n's addresses, dynamic port range,
// reserved ports and host volumes from the configuration. The default
// network comes first: NetworkAddress as is, else the first IPv4 address
// of NetworkInterface, else the machine's first non-loopback IPv4 address
// (127.0.0.1 when it has none).
func (c Config) fingerprintNetwork(n *events.Node) error {
	ifs, names, err := interfaceAddrs()
	if err != nil {
		return fmt.Errorf("client: list network interfaces: %w", err)
	}
	slices.Sort(names)
	ipv4 := func(addrs []net.Addr, keep func(net.IP) bool) string {
		for _, a := range addrs {
			if ipn, ok := a.(*net.IPNet); ok && ipn.IP.To4() != nil && keep(ipn.IP) {
				return ipn.IP.String()
			}
		}
		return ""
	}
	anyIP := func(net.IP) bool { return true }
	def := events.NodeNetwork{Name: events.DefaultHostNetwork, Address: c.NetworkAddress, Device: c.NetworkInterface}
	switch {
	case def.Address != "":
	case c.NetworkInterface != "":
		addrs, ok := ifs[c.NetworkInterface]
		if !ok {
			return fmt.Errorf("client: network_interface %q: no such interface (or it is down)", c.NetworkInterface)
		}
		if def.Address = ipv4(addrs, anyIP); def.Address == "" {
			return fmt.Errorf("client: network_interface %q: %w", c.NetworkInterface, errNoAddress)
		}
	default:
		for _, name := range names {
			if a := ipv4(ifs[name], func(ip net.IP) bool { return !ip.IsLoopback() }); a != "" {
				def.Address, def.Device = a, name
				break
			}
		}
		if def.Address == "" {
			def.Address = "127.0.0.1"
		}
	}
	n.Networks = []events.NodeNetwork{def}
	if _, ok := n.Attributes["unique.network.ip-address"]; !ok { // as Nomad's fingerprint
		attrs := make(map[string]string, len(n.Attributes)+1)
		for k, v := range n.Attributes {
			attrs[k] = v
		}
		attrs["unique.network.ip-address"] = def.Address
		n.Attributes = attrs
	}
	reserved := []string{}
	if strings.TrimSpace(c.ReservedPorts) != "" {
		reserved = append(reserved, c.ReservedPorts)
	}
	for _, hn := range c.HostNetworks {
		nw := events.NodeNetwork{Name: hn.Name, Device: hn.Interface}
		if hn.Interface != "" {
			addrs, ok := ifs[hn.Interface]
			if !ok {
				return fmt.Errorf("client: host_network %q: interface %q: no such interface (or it is down)", hn.Name, hn.Interface)
			}
			nw.Address = ipv4(addrs, anyIP)
		} else {
			_, cidr, _ := net.ParseCIDR(hn.CIDR)
			for _, name := range names {
				if a := ipv4(ifs[name], cidr.Contains); a != "" {
					nw.Address, nw.Device = a, name
					break
				}
			}
		}
		if nw.Address == "" {
			return fmt.Errorf("client: host_network %q: %w on %s%s", hn.Name, errNoAddress, hn.Interface, hn.CIDR)
		}
		n.Networks = append(n.Networks, nw)
		if strings.TrimSpace(hn.ReservedPorts) != "" {
			reserved = append(reserved, hn.ReservedPorts)
		}
	}
	n.MinDynamicPort, n.MaxDynamicPort = c.dynamicRange()
	n.ReservedPorts = strings.Join(reserved, ",")
	if len(c.HostVolumes) > 0 {
		n.HostVolumes = make(map[string]*events.ClientHostVolume, len(c.HostVolumes))
		for _, hv := range c.HostVolumes {
			n.HostVolumes[hv.Name] = &events.ClientHostVolume{Name: hv.Name, Path: hv.Path, ReadOnly: hv.ReadOnly}
		}
	}
	return nil
}
