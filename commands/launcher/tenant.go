package launcher

import (
	"errors"
	"time"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/launcher"
)

// ApplyTenant creates a tenant or sets its resource limits (P13).
type ApplyTenant struct {
	Tenant events.Tenant
}

var _ commands.Command = ApplyTenant{}

// Validate implements commands.Command.
func (a ApplyTenant) Validate() error {
	if err := ValidName("Name", a.Tenant.Name); err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"MaxServers", a.Tenant.MaxServers}, {"MaxCores", a.Tenant.MaxCores}, {"MaxRAMMB", a.Tenant.MaxRAMMB}} {
		if f.v < 0 {
			return commands.Invalid(f.name, "%d is negative; 0 means no limit", f.v)
		}
	}
	return nil
}

// Decide implements commands.Command.
func (a ApplyTenant) Decide(projections.View, time.Time, commands.IDs) (commands.Decision, error) {
	return commands.Decision{Events: []events.Payload{&events.TenantApplied{Tenant: a.Tenant}}}, nil
}

// DeleteTenant removes a tenant's limits.
type DeleteTenant struct {
	Name string
}

var _ commands.Command = DeleteTenant{}

// Validate implements commands.Command.
func (d DeleteTenant) Validate() error { return ValidName("name", d.Name) }

// Decide implements commands.Command.
func (d DeleteTenant) Decide(v projections.View, _ time.Time, _ commands.IDs) (commands.Decision, error) {
	if _, err := launcher.GetTenant(v, d.Name); errors.Is(err, projections.ErrNotFound) {
		return commands.Decision{}, &commands.NotFoundError{Kind: "tenant", ID: d.Name}
	} else if err != nil {
		return commands.Decision{}, err
	}
	return commands.Decision{Events: []events.Payload{&events.TenantDeleted{Name: d.Name}},
		Preconditions: []events.Precondition{{Table: launcher.TenantsTable, Key: d.Name, Op: events.Exists}}}, nil
}
