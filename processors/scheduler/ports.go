package scheduler

import (
	"fmt"
	"net"
	"slices"

	"github.com/ordoplane/ordo/events"
)

// reasonDynamicPorts is recorded in AllocMetric.DimensionExhausted for a
// node with no free dynamic port, as Nomad words it; the other port
// reasons name the port ("network: reserved port collision admin=9000").
const reasonDynamicPorts = "network: dynamic port selection failed"

// dynamicTries is how many random ports are drawn before the range is
// scanned for a free one.
const dynamicTries = 20

// reservedPorts returns node n's reserved ports, parsed once per Compute
// call; a list that does not parse (the client validates it) reserves
// nothing.
func (s *sched) reservedPorts(n *Node) []events.PortRange {
	if r, ok := s.reserved[n.ID]; ok {
		return r
	}
	r, _ := events.ParsePortList(n.ReservedPorts)
	if s.reserved == nil {
		s.reserved = map[string][]events.PortRange{}
	}
	s.reserved[n.ID] = r
	return r
}

// portTaken reports whether host port p on node n is reserved by the node,
// held by a live allocation the plan does not stop, or given to a
// placement of this plan.
func (s *sched) portTaken(n *Node, p int) bool {
	if events.PortInList(s.reservedPorts(n), p) {
		return true
	}
	u := s.used(n)
	held := u.portDelta[p]
	if i, ok := slices.BinarySearch(u.ports, p); ok {
		for ; i < len(u.ports) && u.ports[i] == p; i++ {
			held++
		}
	}
	return held > 0
}

// movePorts adds d to the plan's count of allocations holding ports on
// node n (placed +1, stopped -1), before or after n's usage is read.
func (s *sched) movePorts(nodeID string, ports []int, d int) {
	if len(ports) == 0 {
		return
	}
	u, ok := s.usage[nodeID]
	if !ok {
		u = s.freed[nodeID]
		if u == nil {
			u = &usage{}
			s.freed[nodeID] = u
		}
	}
	if u.portDelta == nil {
		u.portDelta = map[int]int{}
	}
	for _, p := range ports {
		u.portDelta[p] += d
	}
}

// hostNetworkIP returns the address of node n's host network name ("" or
// "default": the node's main address); ok is false when n has no such
// network. A node that registered no address at all (an older or
// simulated client) offers its HTTP address's host for the default one.
func hostNetworkIP(n *Node, name string) (string, bool) {
	if name == "" {
		name = events.DefaultHostNetwork
	}
	for _, nw := range n.Networks {
		if nw.Name == name {
			return nw.Address, true
		}
	}
	if name != events.DefaultHostNetwork {
		return "", false
	}
	if len(n.Networks) > 0 {
		return n.Networks[0].Address, true
	}
	if host, _, err := net.SplitHostPort(n.HTTPAddr); err == nil {
		return host, true
	}
	return "", true
}

// hostNetworksOK reports whether node n has every host network group tg's
// ports name; when not, the reason names the first missing one (Nomad's
// words).
func hostNetworksOK(tg *events.TaskGroup, n *Node) (bool, string) {
	for i := range tg.Networks {
		nw := &tg.Networks[i]
		for _, ports := range [][]events.Port{nw.ReservedPorts, nw.DynamicPorts} {
			for _, p := range ports {
				if _, ok := hostNetworkIP(n, p.HostNetwork); !ok {
					return false, fmt.Sprintf("missing host network %q for port %q", p.HostNetwork, p.Label)
				}
			}
		}
	}
	return true, ""
}

// usesHostNetworks reports whether any group of job names a host network
// other than the default: node addresses are not part of the computed
// class, so such a job's blocked eval escapes it.
func usesHostNetworks(job *events.Job) bool {
	for i := range job.TaskGroups {
		for _, nw := range job.TaskGroups[i].Networks {
			for _, ports := range [][]events.Port{nw.ReservedPorts, nw.DynamicPorts} {
				for _, p := range ports {
					if p.HostNetwork != "" && p.HostNetwork != events.DefaultHostNetwork {
						return true
					}
				}
			}
		}
	}
	return false
}

// dynamicRange returns node n's dynamic port range.
func dynamicRange(n *Node) (lo, hi int) {
	lo, hi = n.MinDynamicPort, n.MaxDynamicPort
	if lo <= 0 {
		lo = events.DefaultMinDynamicPort
	}
	if hi <= 0 {
		hi = events.DefaultMaxDynamicPort
	}
	return lo, min(hi, 65535)
}

// assignPorts gives the group networks nets their host ports on node n:
// static ports must be free (not reserved by the node, held by a live
// allocation or given in this plan) and in 1-65535; dynamic ones are drawn
// from the node's range with a generator seeded from seed, so a replay
// draws the same ports. It changes nothing: place records what it
// returns. When the node cannot give them, the reason is the exhausted
// dimension, as Nomad words it.
func (s *sched) assignPorts(nets []events.NetworkResource, n *Node, seed string) (*events.AllocatedResources, string) {
	if len(nets) == 0 {
		return nil, ""
	}
	mine := map[int]bool{} // ports this allocation took so far
	free := func(p int) bool { return !mine[p] && !s.portTaken(n, p) }
	out := &events.AllocatedResources{}
	var r *rng
	for i := range nets {
		want := &nets[i]
		got := events.NetworkResource{Mode: want.Mode, Device: want.Device, MBits: want.MBits}
		if got.Mode == "" {
			got.Mode = events.NetworkModeHost
		}
		ipOf := func(p events.Port) string {
			ip, _ := hostNetworkIP(n, p.HostNetwork)
			return ip
		}
		for _, p := range want.ReservedPorts {
			if p.Value < 1 || p.Value > 65535 {
				return nil, fmt.Sprintf("network: invalid port %s=%d", p.Label, p.Value)
			}
			if !free(p.Value) {
				return nil, fmt.Sprintf("network: reserved port collision %s=%d", p.Label, p.Value)
			}
			mine[p.Value] = true
			got.ReservedPorts = append(got.ReservedPorts, p)
			out.Shared.Ports = append(out.Shared.Ports, events.PortMapping{Label: p.Label, Value: p.Value, To: p.To, HostIP: ipOf(p)})
		}
		lo, hi := dynamicRange(n)
		for _, p := range want.DynamicPorts {
			if r == nil {
				r = newRNG(seed)
			}
			v := pickPort(r, lo, hi, free)
			if v == 0 {
				return nil, reasonDynamicPorts
			}
			mine[v] = true
			p.Value = v
			got.DynamicPorts = append(got.DynamicPorts, p)
			out.Shared.Ports = append(out.Shared.Ports, events.PortMapping{Label: p.Label, Value: v, To: p.To, HostIP: ipOf(p)})
		}
		if len(want.ReservedPorts)+len(want.DynamicPorts) > 0 {
			got.IP = ipOf(firstPort(want))
		} else {
			got.IP, _ = hostNetworkIP(n, "")
		}
		out.Shared.Networks = append(out.Shared.Networks, got)
	}
	return out, ""
}

// firstPort returns a network's first port, static ones first.
func firstPort(nw *events.NetworkResource) events.Port {
	if len(nw.ReservedPorts) > 0 {
		return nw.ReservedPorts[0]
	}
	return nw.DynamicPorts[0]
}

// pickPort draws a free port in [lo, hi]: a few random draws, then a scan
// from a random start, so a nearly full range is still found; 0 when none
// is free.
func pickPort(r *rng, lo, hi int, free func(int) bool) int {
	if hi < lo {
		return 0
	}
	span := hi - lo + 1
	for range dynamicTries {
		if p := lo + r.intn(span); free(p) {
			return p
		}
	}
	start := r.intn(span)
	for i := range span {
		if p := lo + (start+i)%span; free(p) {
			return p
		}
	}
	return 0
}

// portSeed is the seed of an allocation's dynamic ports: the eval, the
// allocation's name and the node, so a replay draws the same ports.
func (s *sched) portSeed(name string, n *Node) string {
	return s.eval.ID + "\x00" + name + "\x00" + n.ID
}
