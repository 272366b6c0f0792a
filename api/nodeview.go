package api

import (
	"time"

	"github.com/ordoplane/ordo/events"
)

// NodeListStub is a node as GET /v1/nodes lists it (the fields the CLI
// reads).
type NodeListStub struct {
	ID                    string
	Name                  string
	Datacenter            string
	NodeClass             string
	NodePool              string
	Drain                 bool
	SchedulingEligibility string
	Status                string
}

// Node is a node as GET /v1/node/<id> answers it (the fields the CLI
// reads; StatusUpdatedAt is Unix seconds).
type Node struct {
	NodeListStub
	HTTPAddr          string
	StatusDescription string
	StatusUpdatedAt   int64
	Attributes        map[string]string
	Meta              map[string]string
	Resources         struct{ CPU, MemoryMB, DiskMB int }
	Reserved          struct{ CPU, MemoryMB, DiskMB int }
	Drivers           map[string]struct{ Detected, Healthy bool }
	// Networks are the addresses the node offers ports on, the default
	// first; MinDynamicPort and MaxDynamicPort its dynamic port range (0:
	// the defaults); ReservedPorts the host ports kept from allocations.
	Networks       []events.NodeNetwork
	MinDynamicPort int
	MaxDynamicPort int
	ReservedPorts  string
	// HostVolumes are the host directories the node offers, by name.
	HostVolumes   map[string]*events.ClientHostVolume
	DrainStrategy *struct {
		Deadline         time.Duration
		IgnoreSystemJobs bool
		ForceDeadline    time.Time
		StartedAt        time.Time
	}
	CreateIndex uint64
	ModifyIndex uint64
}
