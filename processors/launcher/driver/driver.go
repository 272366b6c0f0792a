// Package driver defines what the launcher asks of a cloud: create and
// delete instances as state machines the provider's one runner advances
// (P5, P17: no goroutine per instance), and report quota and instance
// type resources (P14). Drivers live in subpackages (sim, static).
//
// A HostDriver (static) hands out a fixed set of hosts instead: the
// runner registers them as instances when the provider starts and when
// its configuration changes (P29), checks a host is reachable before
// handing it out, and never creates one nor pauses for one (P8).
//
// # Usage
//
//	m := d.Create(driver.Spec{InstanceID: id, Label: "ubuntu-small", InstanceType: "small"})
//	for { done, err := m.Advance(ctx, now); … } // one non-blocking step per runner pass
//
// # Concurrency
//
// A Driver and its machines are used by one runner goroutine; Advance
// never blocks for long.
//
// # Invariants
//
//   - A create that fails reports an error classified by Classify:
//     ErrQuota (the cloud refused for quota, P24), ErrPermanent (a
//     configuration error such as an unknown instance type, P2), anything
//     else transient.
package driver

import (
	"context"
	"errors"
	"time"
)

// Sentinel errors a driver wraps to classify a failure.
var (
	// ErrQuota is a cloud refusing a launch for quota (P24).
	ErrQuota = errors.New("driver: over cloud quota")
	// ErrPermanent is a configuration error that will not go away by
	// retrying, such as an instance type the cloud does not have (P2).
	ErrPermanent = errors.New("driver: permanent configuration error")
	// ErrUnreachable is a host that cannot be reached (static driver, P8).
	ErrUnreachable = errors.New("driver: host unreachable")
)

// Spec is what to create.
type Spec struct {
	InstanceID   string
	Label        string
	InstanceType string
	Pool         string
	Attributes   map[string]string
}

// Created is what the cloud reports of a created instance.
type Created struct {
	ExternalID string
	Addresses  []string
}

// Machine is one create or delete in progress.
type Machine interface {
	// Advance takes one non-blocking step at now; done reports the end,
	// err a failure (which also ends the machine).
	Advance(ctx context.Context, now time.Time) (done bool, err error)
}

// CreateMachine is a create in progress.
type CreateMachine interface {
	Machine
	// Result is the created instance, once done.
	Result() Created
}

// Quota is a cloud's limits; 0 is unlimited.
type Quota struct {
	Instances, Cores, RAMMB int
}

// Resources are what one instance of a type holds.
type Resources struct {
	Cores, RAMMB int
}

// Driver provisions instances for one provider generation.
type Driver interface {
	// Create starts creating spec's instance.
	Create(spec Spec) CreateMachine
	// Delete starts deleting an instance created as externalID ("" when
	// the create never got that far).
	Delete(instanceID, externalID string) Machine
	// Quota returns the cloud's limits.
	Quota(ctx context.Context) (Quota, error)
	// InstanceType returns the resources of an instance type; an unknown
	// type is ErrPermanent.
	InstanceType(ctx context.Context, name string) (Resources, error)
}

// Host is one machine a HostDriver hands out.
type Host struct {
	// Name identifies the host within its provider; it is the instance's
	// external id.
	Name string
	// Address is host or host:port.
	Address string
	// Labels are the labels the host serves; the first is its instance's
	// label.
	Labels []string
}

// HostDriver is a Driver whose instances are fixed hosts (static): they
// are registered, not created, and handed out only when reachable.
type HostDriver interface {
	Driver
	// Hosts returns the configured hosts, in configuration order.
	Hosts() []Host
	// Reachable reports nil when host answers, else an error wrapping
	// ErrUnreachable. It returns within the driver's timeout and is safe
	// to call for several hosts at once.
	Reachable(ctx context.Context, host Host) error
}
