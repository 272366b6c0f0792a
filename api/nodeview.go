package api

import "time"

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
	DrainStrategy     *struct {
		Deadline         time.Duration
		IgnoreSystemJobs bool
		ForceDeadline    time.Time
		StartedAt        time.Time
	}
	CreateIndex uint64
	ModifyIndex uint64
}
