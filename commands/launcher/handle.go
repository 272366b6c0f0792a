package launcher

import (
	"errors"
	"time"

	"github.com/ordoplane/ordo/commands"
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/launcher"
)

// The commands below are the launcher processor's: each carries what it
// decided on as preconditions, so a request or instance that changed
// meanwhile is refused with 409 and decided again.

// Assignment is a ready instance to assign, as the processor read it.
type Assignment struct {
	InstanceID  string
	ModifyIndex uint64
}

// Accept is a provider taking a request: it becomes pending, ready
// instances of the provider's pool are assigned to it (P3, each with its
// modify index as a precondition, P4) and the rest are launched
// (building). With nothing to launch the request is fulfilled at once.
type Accept struct {
	Provider    string
	ConfigIndex uint64
	Pool        string
	RequestID   string
	// RequestModifyIndex is the request's modify index as read.
	RequestModifyIndex uint64
	Assign             []Assignment
	// Launch are the instances to create; their ID, request, requestor
	// and tenant are filled in here.
	Launch []events.Instance
	// Partial accepts without fulfilling even when nothing is launched:
	// the provider paused for this request and launches the rest later.
	Partial bool

	launched []string
}

var _ commands.Command = (*Accept)(nil)

// Launched returns the ids of the instances the last Decide created.
func (a *Accept) Launched() []string { return a.launched }

// Validate implements commands.Command.
func (a *Accept) Validate() error {
	if a.Provider == "" || a.RequestID == "" {
		return commands.Invalid("RequestID", "provider and request are required")
	}
	return nil
}

// Decide implements commands.Command.
func (a *Accept) Decide(v projections.View, _ time.Time, ids commands.IDs) (commands.Decision, error) {
	r, err := getRequest(v, a.RequestID)
	if err != nil {
		return commands.Decision{}, err
	}
	dec := commands.Decision{
		Events: []events.Payload{&events.NodeRequestStateChanged{ID: r.ID, State: events.RequestPending,
			Provider: a.Provider, Pool: a.Pool}},
		Preconditions: []events.Precondition{{Table: launcher.RequestsTable, Key: r.ID, Op: events.ModifyIndex, Index: a.RequestModifyIndex}},
	}
	var tenantUse launcher.Usage
	var assigned []string
	for _, as := range a.Assign {
		in, err := getInstance(v, as.InstanceID)
		if err != nil {
			return commands.Decision{}, err
		}
		dec.Events = append(dec.Events, &events.InstanceAssigned{ID: in.ID, RequestID: r.ID, Requestor: r.Requestor, Tenant: r.Tenant})
		dec.Preconditions = append(dec.Preconditions,
			events.Precondition{Table: launcher.InstancesTable, Key: in.ID, Op: events.ModifyIndex, Index: as.ModifyIndex})
		if in.Tenant != r.Tenant {
			tenantUse = tenantUse.Add(launcher.Usage{Servers: 1, Cores: in.Cores, RAMMB: in.RAMMB})
		}
		assigned = append(assigned, in.ID)
	}
	a.launched = nil
	for _, in := range a.Launch {
		in.ID, in.RequestID, in.Requestor, in.Tenant = ids(), r.ID, r.Requestor, r.Tenant
		in.Provider, in.ConfigIndex, in.Pool = a.Provider, a.ConfigIndex, a.Pool
		dec.Events = append(dec.Events, &events.InstanceCreated{Instance: in})
		tenantUse = tenantUse.Add(launcher.Usage{Servers: 1, Cores: in.Cores, RAMMB: in.RAMMB})
		a.launched = append(a.launched, in.ID)
	}
	if r.Tenant != "" && tenantUse != (launcher.Usage{}) {
		dec.Preconditions = append(dec.Preconditions, launcher.TenantFits(r.Tenant, tenantUse))
	}
	if len(a.Launch) == 0 && !a.Partial {
		dec.Events = append(dec.Events, fulfil(r, a.Provider, assigned)...)
	}
	return dec, nil
}

// Launch creates one more instance for a pending request (a relaunch
// after an aborted or failed launch, P24).
type Launch struct {
	RequestID          string
	RequestModifyIndex uint64
	Instance           events.Instance

	id string
}

var _ commands.Command = (*Launch)(nil)

// ID returns the id of the instance the last Decide created.
func (l *Launch) ID() string { return l.id }

// Validate implements commands.Command.
func (l *Launch) Validate() error {
	if l.RequestID == "" || l.Instance.Provider == "" {
		return commands.Invalid("RequestID", "request and provider are required")
	}
	return nil
}

// Decide implements commands.Command.
func (l *Launch) Decide(v projections.View, _ time.Time, ids commands.IDs) (commands.Decision, error) {
	r, err := getRequest(v, l.RequestID)
	if err != nil {
		return commands.Decision{}, err
	}
	in := l.Instance
	in.ID, in.RequestID, in.Requestor, in.Tenant = ids(), r.ID, r.Requestor, r.Tenant
	l.id = in.ID
	dec := commands.Decision{Events: []events.Payload{&events.InstanceCreated{Instance: in}},
		Preconditions: []events.Precondition{{Table: launcher.RequestsTable, Key: r.ID, Op: events.ModifyIndex, Index: l.RequestModifyIndex}}}
	if r.Tenant != "" {
		dec.Preconditions = append(dec.Preconditions, launcher.TenantFits(r.Tenant, launcher.Usage{Servers: 1, Cores: in.Cores, RAMMB: in.RAMMB}))
	}
	return dec, nil
}

// SetInstanceState records what a driver reported about an instance. An
// instance turning ready completes its pending request when every other
// instance of the request is ready too.
type SetInstanceState struct {
	ID         string
	State      string
	ExternalID string
	Addresses  []string
	Reason     string
}

var _ commands.Command = SetInstanceState{}

// Validate implements commands.Command.
func (s SetInstanceState) Validate() error {
	if s.ID == "" || s.State == "" {
		return commands.Invalid("State", "instance and state are required")
	}
	return nil
}

// Decide implements commands.Command.
func (s SetInstanceState) Decide(v projections.View, _ time.Time, _ commands.IDs) (commands.Decision, error) {
	in, err := getInstance(v, s.ID)
	if err != nil {
		return commands.Decision{}, err
	}
	state := s.State
	if in.State == events.InstanceHold && state == events.InstanceReady {
		state = events.InstanceHold // held while building: stays held
	}
	dec := commands.Decision{
		Events: []events.Payload{&events.InstanceStateChanged{ID: in.ID, State: state, ExternalID: s.ExternalID,
			Addresses: s.Addresses, Reason: s.Reason}},
		Preconditions: []events.Precondition{{Table: launcher.InstancesTable, Key: in.ID, Op: events.Exists}},
	}
	if state != events.InstanceReady || in.RequestID == "" {
		return dec, nil
	}
	r, err := launcher.GetRequest(v, in.RequestID)
	if errors.Is(err, projections.ErrNotFound) {
		return dec, nil
	} else if err != nil {
		return commands.Decision{}, err
	}
	if r.State != events.RequestPending || len(r.Instances) < len(r.Labels) {
		return dec, nil
	}
	var live []string
	for _, id := range r.Instances {
		if id == in.ID {
			live = append(live, id)
			continue
		}
		other, err := launcher.GetInstance(v, id)
		if err != nil {
			continue
		}
		switch other.State {
		case events.InstanceReady:
			live = append(live, id)
		case events.InstanceBuilding:
			return dec, nil
		}
	}
	if len(live) < len(r.Labels) {
		return dec, nil
	}
	dec.Events = append(dec.Events, fulfil(r, r.Provider, live)...)
	dec.Preconditions = append(dec.Preconditions, requestUnchanged(r))
	return dec, nil
}

// RemoveInstance records an instance deleted by its provider.
type RemoveInstance struct {
	ID string
}

var _ commands.Command = RemoveInstance{}

// Validate implements commands.Command.
func (r RemoveInstance) Validate() error {
	if r.ID == "" {
		return commands.Invalid("id", "must not be empty")
	}
	return nil
}

// Decide implements commands.Command.
func (r RemoveInstance) Decide(v projections.View, _ time.Time, _ commands.IDs) (commands.Decision, error) {
	if _, err := getInstance(v, r.ID); err != nil {
		return commands.Decision{}, err
	}
	return commands.Decision{Events: []events.Payload{&events.InstanceDeleted{ID: r.ID}}}, nil
}

// Decline is a provider declining a request it cannot serve (P1, P7).
// When every provider has declined it, the request fails.
type Decline struct {
	RequestID          string
	RequestModifyIndex uint64
	Provider           string
	Reason             string
}

var _ commands.Command = Decline{}

// Validate implements commands.Command.
func (d Decline) Validate() error {
	if d.RequestID == "" || d.Provider == "" || d.Reason == "" {
		return commands.Invalid("Reason", "request, provider and reason are required")
	}
	return nil
}

// Decide implements commands.Command.
func (d Decline) Decide(v projections.View, _ time.Time, _ commands.IDs) (commands.Decision, error) {
	r, err := getRequest(v, d.RequestID)
	if err != nil {
		return commands.Decision{}, err
	}
	dec := commands.Decision{Events: []events.Payload{&events.NodeRequestDeclined{ID: r.ID, Provider: d.Provider, Reason: d.Reason}},
		Preconditions: []events.Precondition{{Table: launcher.RequestsTable, Key: r.ID, Op: events.ModifyIndex, Index: d.RequestModifyIndex}}}
	provs, err := launcher.Providers(v)
	if err != nil {
		return commands.Decision{}, err
	}
	for _, p := range provs {
		if p.Config.Name != d.Provider && !r.Declined(p.Config.Name) {
			return dec, nil
		}
	}
	dec.Events = append(dec.Events, &events.NodeRequestFailed{ID: r.ID, Reason: "declined by every provider"})
	return dec, nil
}

// Fail fails a request a provider accepted and cannot fulfil; with
// LabelError set it also marks the label errored on the provider's
// generation (P2). The request's instances are released.
type Fail struct {
	RequestID          string
	RequestModifyIndex uint64
	Provider           string
	Reason             string
	// LabelError, when set, is the label with a permanent error.
	LabelError  string
	ConfigIndex uint64
}

var _ commands.Command = Fail{}

// Validate implements commands.Command.
func (f Fail) Validate() error {
	if f.RequestID == "" || f.Reason == "" {
		return commands.Invalid("Reason", "request and reason are required")
	}
	return nil
}

// Decide implements commands.Command.
func (f Fail) Decide(v projections.View, _ time.Time, _ commands.IDs) (commands.Decision, error) {
	r, err := getRequest(v, f.RequestID)
	if err != nil {
		return commands.Decision{}, err
	}
	var dec commands.Decision
	if f.LabelError != "" {
		dec.Events = append(dec.Events, &events.ProviderLabelErrored{Name: f.Provider, ConfigIndex: f.ConfigIndex,
			Label: f.LabelError, Reason: f.Reason})
	}
	dec.Events = append(dec.Events, &events.NodeRequestFailed{ID: r.ID, Provider: f.Provider, Reason: f.Reason})
	dec.Events = append(dec.Events, releaseInstances(v, r)...)
	dec.Preconditions = []events.Precondition{{Table: launcher.RequestsTable, Key: r.ID, Op: events.ModifyIndex, Index: f.RequestModifyIndex}}
	return dec, nil
}

// Release hands a pending request back to every provider (P8, P27); its
// instances are released for reuse.
type Release struct {
	RequestID          string
	RequestModifyIndex uint64
	Provider           string
	Reason             string
}

var _ commands.Command = Release{}

// Validate implements commands.Command.
func (r Release) Validate() error {
	if r.RequestID == "" {
		return commands.Invalid("RequestID", "must not be empty")
	}
	return nil
}

// Decide implements commands.Command.
func (r Release) Decide(v projections.View, _ time.Time, _ commands.IDs) (commands.Decision, error) {
	req, err := getRequest(v, r.RequestID)
	if err != nil {
		return commands.Decision{}, err
	}
	dec := commands.Decision{Events: []events.Payload{&events.NodeRequestStateChanged{ID: req.ID, State: events.RequestRequested,
		Provider: r.Provider, Reason: r.Reason}},
		Preconditions: []events.Precondition{{Table: launcher.RequestsTable, Key: req.ID, Op: events.ModifyIndex, Index: r.RequestModifyIndex}}}
	dec.Events = append(dec.Events, releaseInstances(v, req)...)
	return dec, nil
}

// Pause records a provider pausing at quota for a request, or resuming.
type Pause struct {
	Provider    string
	ConfigIndex uint64
	Paused      bool
	RequestID   string
	Reason      string
}

var _ commands.Command = Pause{}

// Validate implements commands.Command.
func (p Pause) Validate() error {
	if p.Provider == "" {
		return commands.Invalid("Provider", "must not be empty")
	}
	return nil
}

// Decide implements commands.Command.
func (p Pause) Decide(v projections.View, _ time.Time, _ commands.IDs) (commands.Decision, error) {
	return commands.Decision{Events: []events.Payload{&events.ProviderPaused{Name: p.Provider, ConfigIndex: p.ConfigIndex,
		Paused: p.Paused, RequestID: p.RequestID, Reason: p.Reason}},
		Preconditions: []events.Precondition{{Table: launcher.ProvidersTable, Key: p.Provider, Op: events.Exists}}}, nil
}

// fulfil returns the events fulfilling r with instances. A min-ready
// request's instances stay ready and unassigned for reuse, and the
// request, its job done, is deleted.
func fulfil(r *launcher.Request, provider string, instances []string) []events.Payload {
	out := []events.Payload{&events.NodeRequestFulfilled{ID: r.ID, Provider: provider, Instances: instances}}
	if !r.MinReady {
		return out
	}
	for _, id := range instances {
		out = append(out, &events.InstanceReleased{ID: id, RequestID: r.ID})
	}
	return append(out, &events.NodeRequestDeleted{ID: r.ID})
}
