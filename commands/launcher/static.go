package launcher

import (
	"fmt"
	"slices"
	"time"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/launcher"
)

// hostInstanceID is the id of the instance registering host of provider
// at generation gen: fixed, so the same registration decided twice (a
// runner that read before its own write applied) applies once.
func hostInstanceID(provider, host string, gen uint64) string {
	return fmt.Sprintf("static-%s-%s-%d", provider, host, gen)
}

// RegisterHost registers a static host as a ready, unassigned instance
// of the provider's pool (P29). Its external id is the host's name and
// its address the host's.
type RegisterHost struct {
	Provider    string
	ConfigIndex uint64
	Pool        string
	Host        events.StaticHost
	// Attributes are the pool's node attributes (P21).
	Attributes map[string]string
}

var _ commands.Command = RegisterHost{}

// Validate implements commands.Command.
func (r RegisterHost) Validate() error {
	if r.Provider == "" || r.Pool == "" || r.Host.Name == "" || r.Host.Address == "" || len(r.Host.Labels) == 0 {
		return commands.Invalid("Host", "provider, pool, and a host with a name, an address and labels are required")
	}
	return nil
}

// Decide implements commands.Command.
func (r RegisterHost) Decide(_ projections.View, _ time.Time, _ commands.IDs) (commands.Decision, error) {
	id := hostInstanceID(r.Provider, r.Host.Name, r.ConfigIndex)
	return commands.Decision{
		Events: []events.Payload{
			&events.InstanceCreated{Instance: events.Instance{ID: id, Provider: r.Provider, ConfigIndex: r.ConfigIndex, Pool: r.Pool,
				Label: r.Host.Labels[0], Attributes: r.Attributes}},
			&events.InstanceStateChanged{ID: id, State: events.InstanceReady, ExternalID: r.Host.Name,
				Addresses: []string{r.Host.Address}, Reason: "static host registered"},
		},
		Preconditions: []events.Precondition{
			{Table: launcher.InstancesTable, Key: id, Op: events.Absent},
			{Table: launcher.ProvidersTable, Key: r.Provider, Op: events.Exists},
		},
	}, nil
}

// ReturnHost makes a used static host ready and unassigned again: a
// host is handed out again, not deleted, once its requestor is done.
type ReturnHost struct {
	ID string
	// ModifyIndex is the instance's modify index as read.
	ModifyIndex uint64
}

var _ commands.Command = ReturnHost{}

// Validate implements commands.Command.
func (r ReturnHost) Validate() error {
	if r.ID == "" {
		return commands.Invalid("ID", "must not be empty")
	}
	return nil
}

// Decide implements commands.Command.
func (r ReturnHost) Decide(v projections.View, _ time.Time, _ commands.IDs) (commands.Decision, error) {
	in, err := getInstance(v, r.ID)
	if err != nil {
		return commands.Decision{}, err
	}
	if in.State != events.InstanceUsed {
		return commands.Decision{}, &commands.ConflictError{Reason: "instance " + in.ID + " is " + in.State + ", not used"}
	}
	var dec commands.Decision
	if in.RequestID != "" {
		dec.Events = append(dec.Events, &events.InstanceReleased{ID: in.ID, RequestID: in.RequestID})
	}
	dec.Events = append(dec.Events, &events.InstanceStateChanged{ID: in.ID, State: events.InstanceReady, Reason: "static host returned"})
	dec.Preconditions = []events.Precondition{{Table: launcher.InstancesTable, Key: in.ID, Op: events.ModifyIndex, Index: r.ModifyIndex}}
	return dec, nil
}

// validateStatic checks a static provider's hosts: unique valid names,
// an address, and labels that one pool serves together.
func validateStatic(c events.ProviderConfig) error {
	if c.Static == nil || len(c.Static.Hosts) == 0 {
		return commands.Invalid("static", "the static driver needs a static block with hosts")
	}
	seen := map[string]bool{}
	for _, h := range c.Static.Hosts {
		if err := ValidName("static.host", h.Name); err != nil {
			return err
		}
		field := "static.host." + h.Name
		if seen[h.Name] {
			return commands.Invalid(field, "defined twice")
		}
		seen[h.Name] = true
		if h.Address == "" {
			return commands.Invalid(field+".address", "must not be empty")
		}
		if len(h.Labels) == 0 {
			return commands.Invalid(field+".labels", "a host serves at least one label")
		}
		served := false
		for _, p := range c.Pools {
			all := true
			for _, l := range h.Labels {
				all = all && slices.Contains(p.Labels, l)
			}
			served = served || all
		}
		if !served {
			return commands.Invalid(field+".labels", "no pool serves all of %v", h.Labels)
		}
	}
	return nil
}
