package events

import "time"

// KindService is the entity kind of one service registration (an
// instance of a service); its value is the registration id.
const KindService = "service"

// The service providers. Only ordo's own (Nomad's "nomad") is offered.
const ServiceProviderNomad = "nomad"

// The address modes of a service or check.
const (
	AddressModeAuto   = "auto"
	AddressModeHost   = "host"
	AddressModeAlloc  = "alloc"
	AddressModeDriver = "driver"
)

// The check types.
const (
	CheckTypeHTTP   = "http"
	CheckTypeTCP    = "tcp"
	CheckTypeScript = "script"
)

// The statuses of a check, as Nomad's.
const (
	CheckPending  = "pending"
	CheckPassing  = "passing"
	CheckWarning  = "warning"
	CheckCritical = "critical"
)

// Service is a `service` block of a group or task, shaped like Nomad's
// api.Service. Its strings may hold ${...} variables, interpolated by the
// client for each allocation.
type Service struct {
	Name        string            `msgpack:"n" json:"Name"`
	Tags        []string          `msgpack:"tags,omitempty" json:"Tags"`
	CanaryTags  []string          `msgpack:"ctags,omitempty" json:"CanaryTags"`
	PortLabel   string            `msgpack:"port,omitempty" json:"PortLabel"`
	AddressMode string            `msgpack:"am,omitempty" json:"AddressMode"`
	Address     string            `msgpack:"addr,omitempty" json:"Address"`
	Checks      []ServiceCheck    `msgpack:"checks,omitempty" json:"Checks"`
	Meta        map[string]string `msgpack:"meta,omitempty" json:"Meta"`
	CanaryMeta  map[string]string `msgpack:"cmeta,omitempty" json:"CanaryMeta"`
	// TaskName is the task a group-level service's checks run in (script
	// checks); a task's services name their task.
	TaskName string `msgpack:"task,omitempty" json:"TaskName"`
	// OnUpdate is "require_healthy" (default), "ignore_warnings" or
	// "ignore": how the checks count for deployment health.
	OnUpdate string `msgpack:"ou,omitempty" json:"OnUpdate"`
	Provider string `msgpack:"prov,omitempty" json:"Provider"`
}

// ServiceCheck is a `check` block of a service, shaped like Nomad's
// api.ServiceCheck.
type ServiceCheck struct {
	Name          string              `msgpack:"n,omitempty" json:"Name"`
	Type          string              `msgpack:"t" json:"Type"`
	Command       string              `msgpack:"cmd,omitempty" json:"Command"`
	Args          []string            `msgpack:"args,omitempty" json:"Args"`
	Path          string              `msgpack:"path,omitempty" json:"Path"`
	Protocol      string              `msgpack:"proto,omitempty" json:"Protocol"`
	PortLabel     string              `msgpack:"port,omitempty" json:"PortLabel"`
	AddressMode   string              `msgpack:"am,omitempty" json:"AddressMode"`
	Expose        bool                `msgpack:"exp,omitempty" json:"Expose"`
	Interval      time.Duration       `msgpack:"i" json:"Interval"`
	Timeout       time.Duration       `msgpack:"to" json:"Timeout"`
	InitialStatus string              `msgpack:"is,omitempty" json:"InitialStatus"`
	Method        string              `msgpack:"meth,omitempty" json:"Method"`
	Header        map[string][]string `msgpack:"hdr,omitempty" json:"Header"`
	Body          string              `msgpack:"body,omitempty" json:"Body"`
	TaskName      string              `msgpack:"task,omitempty" json:"TaskName"`
	OnUpdate      string              `msgpack:"ou,omitempty" json:"OnUpdate"`
	CheckRestart  *CheckRestart       `msgpack:"cr,omitempty" json:"CheckRestart"`
	// SuccessBeforePassing and FailuresBeforeCritical are how many results
	// in a row change the check's status.
	SuccessBeforePassing   int `msgpack:"sbp,omitempty" json:"SuccessBeforePassing"`
	FailuresBeforeCritical int `msgpack:"fbc,omitempty" json:"FailuresBeforeCritical"`
}

// CheckRestart restarts a task whose check stays unhealthy: after Limit
// failures in a row, not counting those within Grace of the task's start.
type CheckRestart struct {
	Limit          int           `msgpack:"l" json:"Limit"`
	Grace          time.Duration `msgpack:"g,omitempty" json:"Grace"`
	IgnoreWarnings bool          `msgpack:"iw,omitempty" json:"IgnoreWarnings"`
}

// CheckStatus is the latest result of one check of a registration.
type CheckStatus struct {
	Name   string `msgpack:"n" json:"Name"`
	Status string `msgpack:"s" json:"Status"`
	Output string `msgpack:"o,omitempty" json:"Output,omitempty"`
	// Timestamp is the client's time of the result, Unix ns.
	Timestamp int64 `msgpack:"ts,omitempty" json:"Timestamp,omitempty"`
}

// ServiceRegistration is one instance of a service, registered by the
// client running its allocation, shaped like Nomad's
// api.ServiceRegistration (with the checks' statuses added).
type ServiceRegistration struct {
	ID          string        `msgpack:"id" json:"ID"`
	ServiceName string        `msgpack:"n" json:"ServiceName"`
	Namespace   string        `msgpack:"ns" json:"Namespace"`
	NodeID      string        `msgpack:"node" json:"NodeID"`
	Datacenter  string        `msgpack:"dc,omitempty" json:"Datacenter"`
	JobID       string        `msgpack:"job" json:"JobID"`
	AllocID     string        `msgpack:"alloc" json:"AllocID"`
	Tags        []string      `msgpack:"tags,omitempty" json:"Tags"`
	Address     string        `msgpack:"addr" json:"Address"`
	Port        int           `msgpack:"port,omitempty" json:"Port"`
	Checks      []CheckStatus `msgpack:"checks,omitempty" json:"Checks,omitempty"`
	// CreateIndex and ModifyIndex are set by the services projection.
	CreateIndex uint64 `msgpack:"ci,omitempty" json:"CreateIndex"`
	ModifyIndex uint64 `msgpack:"mi,omitempty" json:"ModifyIndex"`
}

// ServicesRegistered records service instances registered or updated (a
// check's status changed) by the node running their allocations.
type ServicesRegistered struct {
	NodeID   string                `msgpack:"node" json:"NodeID"`
	Services []ServiceRegistration `msgpack:"svcs" json:"Services"`
}

// EntityKeys implements Payload: the node, then each registration, its
// allocation and its job.
func (p *ServicesRegistered) EntityKeys() []Key {
	keys := []Key{{Kind: KindNode, Value: p.NodeID}}
	for _, s := range p.Services {
		keys = append(keys, Key{Kind: KindService, Value: s.ID}, Key{Kind: KindAlloc, Value: s.AllocID},
			Key{Kind: KindJob, Value: s.JobID})
	}
	return keys
}

// ServicesDeregistered records service instances removed: by their
// client when the allocation stops, by a user, or by the servers when the
// allocation is lost or stopped or its node went down.
type ServicesDeregistered struct {
	IDs []string `msgpack:"ids" json:"IDs"`
	// Reason says why, for history ("alloc stopped", "node down", "user").
	Reason string `msgpack:"why,omitempty" json:"Reason,omitempty"`
}

// EntityKeys implements Payload.
func (p *ServicesDeregistered) EntityKeys() []Key {
	keys := make([]Key, 0, len(p.IDs))
	for _, id := range p.IDs {
		keys = append(keys, Key{Kind: KindService, Value: id})
	}
	return keys
}

func init() {
	Register(Type{Name: "ServicesRegistered", Version: 1, Topic: "Service",
		New: func() Payload { return new(ServicesRegistered) }})
	Register(Type{Name: "ServicesDeregistered", Version: 1, Topic: "Service",
		New: func() Payload { return new(ServicesDeregistered) }})
}
