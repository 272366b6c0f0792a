package jobspec

import (
	"regexp"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/events"
)

// Networks: a group's `network { mode mbits hostname dns { … } port
// "label" { static to host_network } … }`, in HCL and Nomad's JSON
// (TaskGroup.Networks). Only host networking is offered: bridge and CNI
// modes, hostname and dns (which need a network namespace) are refused.

type specNetwork struct {
	Mode          *string     `json:"Mode"`
	Hostname      *string     `json:"Hostname"`
	MBits         *int        `json:"MBits"`
	DNS           *specDNS    `json:"DNS"`
	ReservedPorts []*specPort `json:"ReservedPorts"`
	DynamicPorts  []*specPort `json:"DynamicPorts"`
}

// specDNS is Nomad's dns block; ordo only notes that one was given.
type specDNS struct {
	Servers  []string `json:"Servers"`
	Searches []string `json:"Searches"`
	Options  []string `json:"Options"`
}

type specPort struct {
	Label       *string `json:"Label"`
	Value       *int    `json:"Value"`
	To          *int    `json:"To"`
	HostNetwork *string `json:"HostNetwork"`
}

var networkSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "mode"}, {Name: "mbits"}, {Name: "hostname"}},
	Blocks:     []hcl.BlockHeaderSchema{{Type: "port", LabelNames: []string{"label"}}, {Type: "dns"}},
}

var portSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "static"}, {Name: "to"}, {Name: "host_network"}},
}

var dnsSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "servers"}, {Name: "searches"}, {Name: "options"}},
}

func networkPath(group string) string { return groupPath(group) + ".network" }

func portPath(group, label string) string { return networkPath(group) + ".port[" + label + "]" }

// network reads a group's network block; a port with static set is a
// reserved port, any other a dynamic one.
func (d *decoder) network(c *hcl.BodyContent, group string) []*specNetwork {
	gp := groupPath(group)
	b := d.single(c, gp, "network")
	if b == nil {
		return nil
	}
	path := networkPath(group)
	nc := d.content(b.Body, path, networkSchema)
	if nc == nil {
		return nil
	}
	n := &specNetwork{Mode: d.str(nc, path, "mode"), MBits: d.int(nc, path, "mbits"), Hostname: d.str(nc, path, "hostname")}
	if db := d.single(nc, path, "dns"); db != nil {
		dp := path + ".dns"
		if dc := d.content(db.Body, dp, dnsSchema); dc != nil {
			n.DNS = &specDNS{Servers: d.strList(dc, dp, "servers"), Searches: d.strList(dc, dp, "searches"),
				Options: d.strList(dc, dp, "options")}
		}
	}
	seen := map[string]bool{}
	for _, pb := range nc.Blocks.OfType("port") {
		label := pb.Labels[0]
		pp := portPath(group, label)
		if seen[label] {
			d.fail(pp, pb.LabelRanges[0], "port label %q is used twice in group %q", label, group)
			return nil
		}
		seen[label] = true
		d.record(pp, pb.DefRange)
		pc := d.content(pb.Body, pp, portSchema)
		if pc == nil {
			return nil
		}
		p := &specPort{Label: &label, To: d.int(pc, pp, "to"), HostNetwork: d.str(pc, pp, "host_network")}
		if v := d.int(pc, pp, "static"); v != nil {
			p.Value = v
			n.ReservedPorts = append(n.ReservedPorts, p)
		} else {
			n.DynamicPorts = append(n.DynamicPorts, p)
		}
	}
	return []*specNetwork{n}
}

// checkNetworkSpecs refuses what a spec can say and an events.Job cannot
// hold: a dns block.
func checkNetworkSpecs(group string, nets []*specNetwork) error {
	for _, n := range nets {
		if n != nil && n.DNS != nil {
			return commands.Invalid(networkPath(group)+".dns",
				"dns needs bridge networking, which ordo does not offer; tasks use the node's resolver")
		}
	}
	return nil
}

func canonicalPorts(in []*specPort) []events.Port {
	var out []events.Port
	for _, p := range in {
		if p == nil {
			p = &specPort{}
		}
		port := events.Port{Label: or(p.Label, ""), Value: or(p.Value, 0), To: or(p.To, 0),
			HostNetwork: or(p.HostNetwork, events.DefaultHostNetwork)}
		if port.HostNetwork == "" {
			port.HostNetwork = events.DefaultHostNetwork
		}
		out = append(out, port)
	}
	return out
}

// canonicalNetworks fills in a group's network defaults: host mode, and
// the default host network for a port that names none.
func canonicalNetworks(in []*specNetwork) []events.NetworkResource {
	var out []events.NetworkResource
	for _, n := range in {
		if n == nil {
			n = &specNetwork{}
		}
		out = append(out, events.NetworkResource{
			Mode:          or(n.Mode, events.NetworkModeHost),
			Hostname:      or(n.Hostname, ""),
			MBits:         or(n.MBits, 0),
			ReservedPorts: canonicalPorts(n.ReservedPorts),
			DynamicPorts:  canonicalPorts(n.DynamicPorts),
		})
		if out[len(out)-1].Mode == "" {
			out[len(out)-1].Mode = events.NetworkModeHost
		}
	}
	return out
}

// portLabel is what Nomad's jobspec accepts as a port label (letters,
// digits, underscores), and the dashes Nomad's jobs use in practice,
// which become underscores in NOMAD_PORT_<label> and its siblings.
var portLabel = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// MaxPort is the highest port number.
const MaxPort = 65535

// validateNetworks checks a group's network block; it returns the group's
// port labels for its services and checks to name.
func validateNetworks(tg *events.TaskGroup) (map[string]bool, error) {
	labels := map[string]bool{}
	if len(tg.Networks) == 0 {
		return labels, nil
	}
	path := networkPath(tg.Name)
	if len(tg.Networks) > 1 {
		return nil, commands.Invalid(path, "a group has one network block, not %d", len(tg.Networks))
	}
	n := &tg.Networks[0]
	switch {
	case n.Mode == "bridge" || n.Mode == "none" || strings.HasPrefix(n.Mode, "cni/"):
		return nil, commands.Invalid(path+".mode", "%q networking is not offered by ordo; use mode = \"host\" (the default)", n.Mode)
	case n.Mode != events.NetworkModeHost && n.Mode != "":
		return nil, commands.Invalid(path+".mode", "%q is not a network mode; ordo offers \"host\" only", n.Mode)
	case n.Hostname != "":
		return nil, commands.Invalid(path+".hostname", "hostname needs bridge networking, which ordo does not offer")
	case n.MBits < 0:
		return nil, commands.Invalid(path+".mbits", "%d is negative", n.MBits)
	case n.Device != "" || n.CIDR != "" || n.IP != "":
		return nil, commands.Invalid(path, "device, CIDR and IP are chosen by the scheduler, not set in a job")
	}
	envNames := map[string]string{}
	static := map[string]map[int]string{} // host network → port → label
	check := func(p events.Port, reserved bool) error {
		pp := portPath(tg.Name, p.Label)
		switch {
		case p.Label == "":
			return commands.Invalid(networkPath(tg.Name)+".port", "a port needs a label")
		case !portLabel.MatchString(p.Label):
			return commands.Invalid(pp, "label %q may hold only letters, digits, underscores and dashes (it names NOMAD_PORT_<label>)", p.Label)
		case labels[p.Label]:
			return commands.Invalid(pp, "port label %q is used twice in group %q", p.Label, tg.Name)
		case p.To < -1 || p.To > MaxPort:
			return commands.Invalid(pp+".to", "%d is not a port (0 to %d, or -1 for the host port)", p.To, MaxPort)
		}
		env := strings.ReplaceAll(p.Label, "-", "_")
		if other, ok := envNames[env]; ok {
			return commands.Invalid(pp, "labels %q and %q both become NOMAD_PORT_%s", other, p.Label, env)
		}
		envNames[env] = p.Label
		labels[p.Label] = true
		if !reserved {
			if p.Value != 0 {
				return commands.Invalid(pp, "a dynamic port's value is chosen by the scheduler; set static for a fixed port")
			}
			return nil
		}
		if p.Value < 1 || p.Value > MaxPort {
			return commands.Invalid(pp+".static", "%d is not a port number (1 to %d)", p.Value, MaxPort)
		}
		hn := p.HostNetwork
		if hn == "" {
			hn = events.DefaultHostNetwork
		}
		byPort := static[hn]
		if byPort == nil {
			byPort = map[int]string{}
			static[hn] = byPort
		}
		if other, ok := byPort[p.Value]; ok {
			return commands.Invalid(pp+".static", "port %d is already asked for by port %q on host network %q", p.Value, other, hn)
		}
		byPort[p.Value] = p.Label
		return nil
	}
	for _, p := range n.ReservedPorts {
		if err := check(p, true); err != nil {
			return nil, err
		}
	}
	for _, p := range n.DynamicPorts {
		if err := check(p, false); err != nil {
			return nil, err
		}
	}
	return labels, nil
}

// sortedLabels returns a set's labels in order, for messages.
func sortedLabels(set map[string]bool) []string {
	out := make([]string, 0, len(set))
	for l := range set {
		out = append(out, l)
	}
	slices.Sort(out)
	return out
}
