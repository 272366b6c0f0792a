package node

import (
	"net"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/events"
)

// validPorts checks a registration's addresses, dynamic port range,
// reserved ports and host volumes, naming the field that is wrong: the
// scheduler trusts them when it gives allocations their ports.
func validPorts(n events.Node) error {
	seen := map[string]bool{}
	for _, nw := range n.Networks {
		if nw.Name == "" || seen[nw.Name] {
			return commands.Invalid("NodeNetworks", "network names must be distinct and not empty (%q)", nw.Name)
		}
		seen[nw.Name] = true
		if net.ParseIP(nw.Address) == nil {
			return commands.Invalid("NodeNetworks", "network %q: address %q is not an IP address", nw.Name, nw.Address)
		}
	}
	lo, hi := n.MinDynamicPort, n.MaxDynamicPort
	switch {
	case lo < 0 || hi < 0 || lo > 65535 || hi > 65535:
		return commands.Invalid("MinDynamicPort", "the dynamic port range %d-%d is outside 1-65535", lo, hi)
	case lo > 0 && hi > 0 && lo > hi:
		return commands.Invalid("MinDynamicPort", "%d is above MaxDynamicPort %d", lo, hi)
	}
	if _, err := events.ParsePortList(n.ReservedPorts); err != nil {
		return commands.Invalid("ReservedHostPorts", "%v", err)
	}
	for name, hv := range n.HostVolumes {
		if name == "" || hv == nil || hv.Name != name || hv.Path == "" {
			return commands.Invalid("HostVolumes", "host volume %q needs its name and a path", name)
		}
	}
	return nil
}
