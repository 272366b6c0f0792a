package launcher

import (
	"errors"
	"time"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/launcher"
)

// MaxRequestLabels bounds the labels of one node request.
const MaxRequestLabels = 64

// CreateRequest makes a node request: one instance per label.
type CreateRequest struct {
	Labels           []string
	Requestor        string
	Tenant           string
	RelativePriority int
	// MinReady marks a request the launcher makes for min-ready (P23).
	MinReady bool

	id string
}

var _ commands.Command = (*CreateRequest)(nil)

// ID returns the id the last Decide minted.
func (c *CreateRequest) ID() string { return c.id }

// Validate implements commands.Command.
func (c *CreateRequest) Validate() error {
	if len(c.Labels) == 0 {
		return commands.Invalid("Labels", "a request asks for at least one label")
	}
	if len(c.Labels) > MaxRequestLabels {
		return commands.Invalid("Labels", "%d labels exceeds %d", len(c.Labels), MaxRequestLabels)
	}
	for _, l := range c.Labels {
		if err := ValidName("Labels", l); err != nil {
			return err
		}
	}
	if c.Tenant != "" {
		if err := ValidName("Tenant", c.Tenant); err != nil {
			return err
		}
	}
	if len(c.Requestor) > 256 {
		return commands.Invalid("Requestor", "%d bytes exceeds 256", len(c.Requestor))
	}
	return nil
}

// Decide implements commands.Command.
func (c *CreateRequest) Decide(_ projections.View, _ time.Time, ids commands.IDs) (commands.Decision, error) {
	c.id = ids()
	return commands.Decision{
		Events: []events.Payload{&events.NodeRequestCreated{Request: events.NodeRequest{ID: c.id, Labels: c.Labels,
			Requestor: c.Requestor, Tenant: c.Tenant, RelativePriority: c.RelativePriority, MinReady: c.MinReady}}},
		Preconditions: []events.Precondition{{Table: launcher.RequestsTable, Key: c.id, Op: events.Absent}},
	}, nil
}

// DeleteRequest removes a node request. Its in-use instances become used
// (and are deleted); the others are released for reuse (P20).
type DeleteRequest struct {
	ID string
}

var _ commands.Command = DeleteRequest{}

// Validate implements commands.Command.
func (d DeleteRequest) Validate() error {
	if d.ID == "" {
		return commands.Invalid("id", "must not be empty")
	}
	return nil
}

// Decide implements commands.Command.
func (d DeleteRequest) Decide(v projections.View, _ time.Time, _ commands.IDs) (commands.Decision, error) {
	r, err := getRequest(v, d.ID)
	if err != nil {
		return commands.Decision{}, err
	}
	dec := commands.Decision{Events: []events.Payload{&events.NodeRequestDeleted{ID: r.ID}},
		Preconditions: []events.Precondition{requestUnchanged(r)}}
	dec.Events = append(dec.Events, releaseInstances(v, r)...)
	return dec, nil
}

// releaseInstances returns the events that free r's instances: in-use
// ones are used (deleted later), the others released for reuse.
func releaseInstances(v projections.View, r *launcher.Request) []events.Payload {
	var out []events.Payload
	for _, id := range r.Instances {
		in, err := launcher.GetInstance(v, id)
		if err != nil || in.RequestID != r.ID {
			continue
		}
		if in.State == events.InstanceInUse {
			out = append(out, &events.InstanceStateChanged{ID: id, State: events.InstanceUsed, Reason: "request " + r.ID + " deleted"})
			continue
		}
		out = append(out, &events.InstanceReleased{ID: id, RequestID: r.ID})
	}
	return out
}

func getRequest(v projections.View, id string) (*launcher.Request, error) {
	r, err := launcher.GetRequest(v, id)
	if errors.Is(err, projections.ErrNotFound) {
		return nil, &commands.NotFoundError{Kind: "node request", ID: id}
	}
	return r, err
}

// requestUnchanged is the precondition that r is as read.
func requestUnchanged(r *launcher.Request) events.Precondition {
	return events.Precondition{Table: launcher.RequestsTable, Key: r.ID, Op: events.ModifyIndex, Index: r.ModifyIndex}
}

// HoldInstance puts an instance on hold: it is never reused nor deleted
// until an operator deletes it.
type HoldInstance struct {
	ID     string
	Reason string
}

var _ commands.Command = HoldInstance{}

// Validate implements commands.Command.
func (h HoldInstance) Validate() error {
	if h.ID == "" {
		return commands.Invalid("id", "must not be empty")
	}
	return nil
}

// Decide implements commands.Command.
func (h HoldInstance) Decide(v projections.View, _ time.Time, _ commands.IDs) (commands.Decision, error) {
	in, err := getInstance(v, h.ID)
	if err != nil {
		return commands.Decision{}, err
	}
	switch in.State {
	case events.InstanceHold:
		return commands.Decision{}, nil
	case events.InstanceDeleting, events.InstanceFailed, events.InstanceAborted, events.InstanceUsed:
		return commands.Decision{}, &commands.ConflictError{Reason: "instance " + in.ID + " is " + in.State + "; only a live instance can be held"}
	}
	return commands.Decision{Events: []events.Payload{&events.InstanceStateChanged{ID: in.ID, State: events.InstanceHold, Reason: h.Reason}},
		Preconditions: []events.Precondition{instanceUnchanged(in)}}, nil
}

// DeleteInstance marks an instance used, so its provider deletes it.
type DeleteInstance struct {
	ID string
}

var _ commands.Command = DeleteInstance{}

// Validate implements commands.Command.
func (d DeleteInstance) Validate() error {
	if d.ID == "" {
		return commands.Invalid("id", "must not be empty")
	}
	return nil
}

// Decide implements commands.Command.
func (d DeleteInstance) Decide(v projections.View, _ time.Time, _ commands.IDs) (commands.Decision, error) {
	in, err := getInstance(v, d.ID)
	if err != nil {
		return commands.Decision{}, err
	}
	if in.State == events.InstanceDeleting || in.State == events.InstanceUsed {
		return commands.Decision{}, nil
	}
	return commands.Decision{Events: []events.Payload{&events.InstanceStateChanged{ID: in.ID, State: events.InstanceUsed, Reason: "deleted by an operator"}},
		Preconditions: []events.Precondition{instanceUnchanged(in)}}, nil
}

func getInstance(v projections.View, id string) (*launcher.Instance, error) {
	in, err := launcher.GetInstance(v, id)
	if errors.Is(err, projections.ErrNotFound) {
		return nil, &commands.NotFoundError{Kind: "instance", ID: id}
	}
	return in, err
}

// instanceUnchanged is the precondition that in is as read (P4).
func instanceUnchanged(in *launcher.Instance) events.Precondition {
	return events.Precondition{Table: launcher.InstancesTable, Key: in.ID, Op: events.ModifyIndex, Index: in.ModifyIndex}
}
