package launcher

import (
	"errors"
	"fmt"
	"slices"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
)

// The projection's tables.
const (
	ProvidersTable           = "launcher_providers"
	TenantsTable             = "launcher_tenants"
	RequestsTable            = "launcher_requests"
	RequestsByStateTable     = "launcher_requests_by_state"
	InstancesTable           = "launcher_instances"
	InstancesByProviderTable = "launcher_instances_by_provider"
	InstancesByTenantTable   = "launcher_instances_by_tenant"
)

// Provider is a provider as readers see it.
type Provider struct {
	Config events.ProviderConfig `msgpack:"cfg"`
	// ConfigIndex is the index of the configuration's ProviderApplied:
	// the provider's generation.
	ConfigIndex uint64 `msgpack:"cfgi"`
	Paused      bool   `msgpack:"paused,omitempty"`
	// PausedRequest is the request the provider paused for.
	PausedRequest string `msgpack:"preq,omitempty"`
	PauseReason   string `msgpack:"preason,omitempty"`
	// ErroredLabels maps a label with a permanent error to the error (P2).
	ErroredLabels map[string]string `msgpack:"errored,omitempty"`
	CreateIndex   uint64            `msgpack:"-"`
	ModifyIndex   uint64            `msgpack:"-"`
}

// PoolFor returns the first pool serving every one of labels (P26).
func (p *Provider) PoolFor(labels []string) (*events.ProviderPool, bool) {
	for i := range p.Config.Pools {
		pl := &p.Config.Pools[i]
		ok := true
		for _, l := range labels {
			if !slices.Contains(pl.Labels, l) {
				ok = false
				break
			}
		}
		if ok {
			return pl, true
		}
	}
	return nil, false
}

// Label returns the configuration of label.
func (p *Provider) Label(name string) (events.LabelConfig, bool) {
	for _, l := range p.Config.Labels {
		if l.Name == name {
			return l, true
		}
	}
	return events.LabelConfig{}, false
}

// Tenant is a tenant as readers see it.
type Tenant struct {
	events.Tenant `msgpack:"t"`
	CreateIndex   uint64 `msgpack:"-"`
	ModifyIndex   uint64 `msgpack:"-"`
}

// Decline is one provider's refusal of a request.
type Decline struct {
	Provider string `msgpack:"p"`
	Reason   string `msgpack:"r"`
}

// Request is a node request as readers see it.
type Request struct {
	events.NodeRequest `msgpack:"r"`
	State              string `msgpack:"state"`
	// Provider and Pool are the provider handling it, once pending.
	Provider string `msgpack:"prov,omitempty"`
	Pool     string `msgpack:"pool,omitempty"`
	// Reason is why it failed, or was last released.
	Reason     string    `msgpack:"reason,omitempty"`
	DeclinedBy []Decline `msgpack:"declined,omitempty"`
	// Instances are the instances assigned to it, in assignment order.
	Instances   []string `msgpack:"inst,omitempty"`
	CreateIndex uint64   `msgpack:"-"`
	ModifyIndex uint64   `msgpack:"-"`
}

// Declined reports whether provider declined the request.
func (r *Request) Declined(provider string) bool {
	return slices.ContainsFunc(r.DeclinedBy, func(d Decline) bool { return d.Provider == provider })
}

// Open reports whether the request is still to be fulfilled.
func (r *Request) Open() bool {
	return r.State == events.RequestRequested || r.State == events.RequestPending
}

// Instance is an instance as readers see it.
type Instance struct {
	events.Instance `msgpack:"i"`
	State           string   `msgpack:"state"`
	ExternalID      string   `msgpack:"ext,omitempty"`
	Addresses       []string `msgpack:"addrs,omitempty"`
	Reason          string   `msgpack:"reason,omitempty"`
	CreateIndex     uint64   `msgpack:"-"`
	ModifyIndex     uint64   `msgpack:"-"`
}

// Live reports whether the instance still counts against quotas: every
// state but deleted (which has no row) counts, building included (P19).
func (i *Instance) Live() bool { return true }

// Projection maintains the launcher's tables.
type Projection struct{}

var _ projections.Projection = Projection{}

// Name implements projections.Projection.
func (Projection) Name() string { return "launcher" }

// Version implements projections.Projection.
func (Projection) Version() int { return 1 }

// Tables implements projections.Projection.
func (Projection) Tables() []string {
	return []string{ProvidersTable, TenantsTable, RequestsTable, RequestsByStateTable,
		InstancesTable, InstancesByProviderTable, InstancesByTenantTable, ComponentsTable}
}

// Apply implements projections.Projection.
func (Projection) Apply(tx *projections.Tx, ev *events.Event) error {
	p, err := events.DecodeIf(ev, "ProviderApplied", "ProviderDeleted", "ProviderPaused", "ProviderLabelErrored",
		"TenantApplied", "TenantDeleted",
		"NodeRequestCreated", "NodeRequestStateChanged", "NodeRequestDeclined", "NodeRequestFulfilled",
		"NodeRequestFailed", "NodeRequestDeleted",
		"InstanceCreated", "InstanceStateChanged", "InstanceAssigned", "InstanceReleased", "InstanceDeleted",
		"ComponentRegistered", "ComponentDeregistered")
	if p == nil || err != nil {
		return err
	}
	a := applier{tx: tx}
	switch e := p.(type) {
	case *events.ComponentRegistered, *events.ComponentDeregistered:
		return a.applyComponent(e)
	case *events.ProviderApplied:
		return a.put(ProvidersTable, e.Provider.Name, &Provider{Config: e.Provider, ConfigIndex: tx.Index()})
	case *events.ProviderDeleted:
		_, err := tx.Delete(ProvidersTable, e.Name)
		return err
	case *events.ProviderPaused:
		return a.provider(e.Name, e.ConfigIndex, func(pr *Provider) {
			pr.Paused, pr.PausedRequest, pr.PauseReason = e.Paused, e.RequestID, e.Reason
			if !e.Paused {
				pr.PausedRequest = ""
			}
		})
	case *events.ProviderLabelErrored:
		return a.provider(e.Name, e.ConfigIndex, func(pr *Provider) {
			if pr.ErroredLabels == nil {
				pr.ErroredLabels = map[string]string{}
			}
			pr.ErroredLabels[e.Label] = e.Reason
		})
	case *events.TenantApplied:
		return a.put(TenantsTable, e.Tenant.Name, &Tenant{Tenant: e.Tenant})
	case *events.TenantDeleted:
		_, err := tx.Delete(TenantsTable, e.Name)
		return err
	case *events.NodeRequestCreated:
		r := &Request{NodeRequest: e.Request, State: events.RequestRequested}
		r.CreateIndex = tx.Index()
		return a.putRequest(r, "")
	case *events.NodeRequestStateChanged:
		return a.request(e.ID, func(r *Request) {
			r.State, r.Provider, r.Pool, r.Reason = e.State, e.Provider, e.Pool, e.Reason
		})
	case *events.NodeRequestDeclined:
		return a.request(e.ID, func(r *Request) {
			if !r.Declined(e.Provider) {
				r.DeclinedBy = append(r.DeclinedBy, Decline{Provider: e.Provider, Reason: e.Reason})
			}
		})
	case *events.NodeRequestFulfilled:
		if err := a.request(e.ID, func(r *Request) {
			r.State, r.Provider, r.Instances = events.RequestFulfilled, e.Provider, e.Instances
		}); err != nil {
			return err
		}
		for _, id := range e.Instances {
			if err := a.instance(id, func(i *Instance) { i.State = events.InstanceInUse }); err != nil {
				return err
			}
		}
		return nil
	case *events.NodeRequestFailed:
		return a.request(e.ID, func(r *Request) {
			r.State, r.Reason = events.RequestFailed, e.Reason
			if e.Provider != "" {
				r.Provider = e.Provider
			}
		})
	case *events.NodeRequestDeleted:
		r, err := a.getRequest(e.ID)
		if errors.Is(err, projections.ErrNotFound) {
			return nil
		} else if err != nil {
			return err
		}
		if r.Open() {
			if err := tx.DeleteKnown(RequestsByStateTable, stateKey(r)); err != nil {
				return err
			}
		}
		return tx.DeleteKnown(RequestsTable, e.ID)
	case *events.InstanceCreated:
		in := &Instance{Instance: e.Instance, State: events.InstanceBuilding}
		if err := a.put(InstancesTable, in.ID, in); err != nil {
			return err
		}
		if err := tx.PutIndex(InstancesByProviderTable, in.Provider+"\x00"+in.ID); err != nil {
			return err
		}
		if err := tx.PutIndex(InstancesByTenantTable, in.Tenant+"\x00"+in.ID); err != nil {
			return err
		}
		return a.addToRequest(in.RequestID, in.ID)
	case *events.InstanceStateChanged:
		return a.instance(e.ID, func(i *Instance) {
			i.State, i.Reason = e.State, e.Reason
			if e.ExternalID != "" {
				i.ExternalID = e.ExternalID
			}
			if e.Addresses != nil {
				i.Addresses = e.Addresses
			}
		})
	case *events.InstanceAssigned:
		var oldTenant string
		var id string
		if err := a.instance(e.ID, func(i *Instance) {
			oldTenant, id = i.Tenant, i.ID
			i.RequestID, i.Requestor, i.Tenant = e.RequestID, e.Requestor, e.Tenant
		}); err != nil {
			return err
		}
		if id != "" && oldTenant != e.Tenant {
			if err := tx.DeleteKnown(InstancesByTenantTable, oldTenant+"\x00"+id); err != nil {
				return err
			}
			if err := tx.PutIndex(InstancesByTenantTable, e.Tenant+"\x00"+id); err != nil {
				return err
			}
		}
		return a.addToRequest(e.RequestID, e.ID)
	case *events.InstanceReleased:
		if err := a.instance(e.ID, func(i *Instance) {
			if i.RequestID == e.RequestID {
				i.RequestID = ""
				if i.State == events.InstanceInUse {
					i.State = events.InstanceReady // free for reuse
				}
			}
		}); err != nil {
			return err
		}
		return a.request(e.RequestID, func(r *Request) {
			r.Instances = slices.DeleteFunc(r.Instances, func(s string) bool { return s == e.ID })
		})
	case *events.InstanceDeleted:
		in, err := getInstance(tx.View, e.ID)
		if errors.Is(err, projections.ErrNotFound) {
			return nil
		} else if err != nil {
			return err
		}
		if err := tx.DeleteKnown(InstancesByProviderTable, in.Provider+"\x00"+in.ID); err != nil {
			return err
		}
		if err := tx.DeleteKnown(InstancesByTenantTable, in.Tenant+"\x00"+in.ID); err != nil {
			return err
		}
		return tx.DeleteKnown(InstancesTable, in.ID)
	}
	return nil
}

// applier writes rows for one event.
type applier struct{ tx *projections.Tx }

func (a applier) put(table, key string, v any) error {
	b, err := events.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode %s row %q: %w", table, key, err)
	}
	return a.tx.Put(table, key, b)
}

// provider updates the provider's row when gen is its generation.
func (a applier) provider(name string, gen uint64, fn func(*Provider)) error {
	p, err := GetProvider(a.tx.View, name)
	if errors.Is(err, projections.ErrNotFound) {
		return nil
	} else if err != nil {
		return err
	}
	if p.ConfigIndex != gen {
		return nil // an older generation's news (P6)
	}
	fn(p)
	return a.put(ProvidersTable, name, p)
}

func (a applier) getRequest(id string) (*Request, error) { return GetRequest(a.tx.View, id) }

// request updates the request's row, if any, and its state index.
func (a applier) request(id string, fn func(*Request)) error {
	r, err := a.getRequest(id)
	if errors.Is(err, projections.ErrNotFound) {
		return nil // vanished (P20)
	} else if err != nil {
		return err
	}
	old := ""
	if r.Open() {
		old = stateKey(r)
	}
	fn(r)
	return a.putRequest(r, old)
}

// putRequest writes r and moves its state index row from old.
func (a applier) putRequest(r *Request, old string) error {
	if err := a.put(RequestsTable, r.ID, r); err != nil {
		return err
	}
	var nw string
	if r.Open() {
		nw = stateKey(r)
	}
	if old == nw {
		return nil
	}
	if old != "" {
		if err := a.tx.DeleteKnown(RequestsByStateTable, old); err != nil {
			return err
		}
	}
	if nw != "" {
		return a.tx.PutIndex(RequestsByStateTable, nw)
	}
	return nil
}

func (a applier) addToRequest(reqID, instID string) error {
	if reqID == "" {
		return nil
	}
	return a.request(reqID, func(r *Request) {
		if !slices.Contains(r.Instances, instID) {
			r.Instances = append(r.Instances, instID)
		}
	})
}

func (a applier) instance(id string, fn func(*Instance)) error {
	in, err := getInstance(a.tx.View, id)
	if errors.Is(err, projections.ErrNotFound) {
		return nil
	} else if err != nil {
		return err
	}
	fn(in)
	return a.put(InstancesTable, id, in)
}

// stateKey is r's row in RequestsByStateTable: state, relative priority
// (order-preserving), create index, id.
func stateKey(r *Request) string {
	prio := uint64(int64(r.RelativePriority)) ^ (1 << 63)
	return fmt.Sprintf("%s\x00%020d\x00%020d\x00%s", r.State, prio, r.CreateIndex, r.ID)
}

func decode[T any](r projections.Row, what string) (*T, error) {
	v := new(T)
	if err := msgpack.Unmarshal(r.Value, v); err != nil {
		return nil, fmt.Errorf("decode %s row: %w", what, err)
	}
	return v, nil
}
