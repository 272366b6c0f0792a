package main

import (
	"github.com/ordoplane/ordo/client"
	"github.com/ordoplane/ordo/cmd/agent"
)

// The client block's addresses, ports and host volumes, named as Nomad's
// (docs/client.md):
//
//	client {
//	  network_interface = "eth0"          # the default address: this interface's first IPv4
//	  min_dynamic_port  = 20000           # the range dynamic ports are drawn from
//	  max_dynamic_port  = 32000
//	  reserved {
//	    cpu            = 500              # MHz, MB and MB kept from allocations
//	    memory         = 512
//	    disk           = 1024
//	    reserved_ports = "22,80,8000-8100"
//	  }
//	  host_network "public" {             # a further address ports may name
//	    cidr           = "203.0.113.0/24" # or interface = "eth1"
//	    reserved_ports = "22"
//	  }
//	  host_volume "data" {                # a directory jobs mount by name; it must exist
//	    path      = "/srv/data"
//	    read_only = false
//	  }
//	}
//
// Values are checked when the client starts (client.Config.Validate).

// clientReservedBlock is the client block's reserved block.
type clientReservedBlock struct {
	CPU           *int    `hcl:"cpu,optional"`
	Memory        *int    `hcl:"memory,optional"`
	Disk          *int    `hcl:"disk,optional"`
	ReservedPorts *string `hcl:"reserved_ports,optional"`
}

// hostNetworkBlock is a client block's host_network block.
type hostNetworkBlock struct {
	Name          string  `hcl:"name,label"`
	CIDR          *string `hcl:"cidr,optional"`
	Interface     *string `hcl:"interface,optional"`
	ReservedPorts *string `hcl:"reserved_ports,optional"`
}

// hostVolumeBlock is a client block's host_volume block.
type hostVolumeBlock struct {
	Name     string `hcl:"name,label"`
	Path     string `hcl:"path"`
	ReadOnly *bool  `hcl:"read_only,optional"`
}

// applyNetwork sets in c the block's addresses, ports and host volumes.
func (b *clientBlock) applyNetwork(c *agent.ClientConfig) {
	deref := func(s *string) string {
		if s == nil {
			return ""
		}
		return *s
	}
	if b.NetworkInterface != nil {
		// An interface named in the file wins over a dev agent's loopback.
		c.NetworkInterface, c.NetworkAddress = *b.NetworkInterface, ""
	}
	if b.MinDynamicPort != nil {
		c.MinDynamicPort = *b.MinDynamicPort
	}
	if b.MaxDynamicPort != nil {
		c.MaxDynamicPort = *b.MaxDynamicPort
	}
	if r := b.Reserved; r != nil {
		for dst, v := range map[*int]*int{&c.Reserved.CPU: r.CPU, &c.Reserved.MemoryMB: r.Memory, &c.Reserved.DiskMB: r.Disk} {
			if v != nil {
				*dst = *v
			}
		}
		if r.ReservedPorts != nil {
			c.ReservedPorts = *r.ReservedPorts
		}
	}
	for _, hn := range b.HostNetworks {
		c.HostNetworks = append(c.HostNetworks, client.HostNetwork{Name: hn.Name, CIDR: deref(hn.CIDR),
			Interface: deref(hn.Interface), ReservedPorts: deref(hn.ReservedPorts)})
	}
	for _, hv := range b.HostVolumes {
		c.HostVolumes = append(c.HostVolumes, client.HostVolume{Name: hv.Name, Path: hv.Path,
			ReadOnly: hv.ReadOnly != nil && *hv.ReadOnly})
	}
}
