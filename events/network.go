package events

// The network modes of a group's network block. Only host networking is
// offered: a task listens on the node's address, on the ports allocated
// to it.
const (
	NetworkModeHost = "host"
	// DefaultHostNetwork names the node's main address, the host network a
	// port uses when it names none.
	DefaultHostNetwork = "default"
)

// The dynamic port range a client offers when its configuration names
// none, as Nomad's.
const (
	DefaultMinDynamicPort = 20000
	DefaultMaxDynamicPort = 32000
)

// Port is one port of a group's network block, shaped like Nomad's
// api.Port. Label names it (NOMAD_PORT_<label>); Value is the host port:
// asked for by a static port, chosen by the scheduler for a dynamic one.
// To is the port the task is told to listen on when it differs (0: Value).
type Port struct {
	Label       string `msgpack:"l" json:"Label"`
	Value       int    `msgpack:"v,omitempty" json:"Value"`
	To          int    `msgpack:"to,omitempty" json:"To"`
	HostNetwork string `msgpack:"hn,omitempty" json:"HostNetwork"`
}

// NetworkResource is a group's network block (in a job) or the network
// an allocation was given (in its AllocatedResources), shaped like Nomad's
// api.NetworkResource. In a job, ReservedPorts are the static ports and
// DynamicPorts the ones the scheduler picks (Value 0); in an allocation
// both carry their host port and IP is the node address they are on.
type NetworkResource struct {
	Mode          string `msgpack:"m,omitempty" json:"Mode"`
	Device        string `msgpack:"dev,omitempty" json:"Device"`
	CIDR          string `msgpack:"cidr,omitempty" json:"CIDR"`
	IP            string `msgpack:"ip,omitempty" json:"IP"`
	Hostname      string `msgpack:"host,omitempty" json:"Hostname"`
	MBits         int    `msgpack:"mb,omitempty" json:"MBits"`
	ReservedPorts []Port `msgpack:"rp,omitempty" json:"ReservedPorts"`
	DynamicPorts  []Port `msgpack:"dp,omitempty" json:"DynamicPorts"`
}

// PortMapping is one port an allocation holds on its node, shaped like
// Nomad's api.PortMapping: Value on HostIP, To inside the task.
type PortMapping struct {
	Label  string `msgpack:"l" json:"Label"`
	Value  int    `msgpack:"v" json:"Value"`
	To     int    `msgpack:"to,omitempty" json:"To"`
	HostIP string `msgpack:"ip,omitempty" json:"HostIP"`
}

// AllocatedSharedResources are the resources an allocation's tasks share:
// its network and the ports it holds on its node.
type AllocatedSharedResources struct {
	DiskMB   int               `msgpack:"disk,omitempty" json:"DiskMB"`
	Networks []NetworkResource `msgpack:"nets,omitempty" json:"Networks"`
	Ports    []PortMapping     `msgpack:"ports,omitempty" json:"Ports"`
}

// AllocatedResources is what the scheduler gave an allocation beyond CPU
// and memory, shaped like Nomad's api.AllocatedResources (only Shared is
// carried; Allocation.Resources holds the sums).
type AllocatedResources struct {
	Shared AllocatedSharedResources `msgpack:"sh" json:"Shared"`
}

// Ports returns the ports the allocation holds, nil for none (or a nil
// receiver).
func (r *AllocatedResources) Ports() []PortMapping {
	if r == nil {
		return nil
	}
	return r.Shared.Ports
}

// NodeNetwork is one address a node offers ports on: the default one
// (Name DefaultHostNetwork) and any host_network of its configuration.
type NodeNetwork struct {
	Name    string `msgpack:"n" json:"Name"`
	Address string `msgpack:"a" json:"Address"`
	Device  string `msgpack:"dev,omitempty" json:"Device,omitempty"`
}

// ClientHostVolume is a host directory a node offers to jobs by name
// (`host_volume "name" { path read_only }` in the client configuration).
type ClientHostVolume struct {
	Name     string `msgpack:"n" json:"Name"`
	Path     string `msgpack:"p" json:"Path"`
	ReadOnly bool   `msgpack:"ro,omitempty" json:"ReadOnly"`
}
