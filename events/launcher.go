package events

// The launcher's events: providers (whose configuration is itself an event,
// P6/P16), tenants with resource limits (P13), node requests and the
// instances providers launch to fulfil them. What a provider provisions is
// an instance; a node is a machine registered with the scheduler.

// The entity kinds of the launcher.
const (
	// KindProvider is a provider; its value is the provider's name.
	KindProvider = "provider"
	// KindNodeRequest is a node request; its value is the request id.
	KindNodeRequest = "node_request"
	// KindInstance is an instance a provider launched; its value is the instance id.
	KindInstance = "instance"
	// KindTenant is a tenant with resource limits; its value is the tenant name.
	KindTenant = "tenant"
)

// The states of a node request.
const (
	// RequestRequested is a request no provider has accepted yet.
	RequestRequested = "requested"
	// RequestPending is a request a provider accepted and is fulfilling.
	RequestPending = "pending"
	// RequestFulfilled is a request whose instances are all ready and
	// handed to the requestor.
	RequestFulfilled = "fulfilled"
	// RequestFailed is a request no provider can fulfil.
	RequestFailed = "failed"
)

// The states of an instance.
const (
	// InstanceBuilding is an instance the provider is creating.
	InstanceBuilding = "building"
	// InstanceReady is an instance created and not in use.
	InstanceReady = "ready"
	// InstanceInUse is an instance handed to its requestor.
	InstanceInUse = "in-use"
	// InstanceUsed is an instance its requestor is done with; it is deleted.
	InstanceUsed = "used"
	// InstanceDeleting is an instance the provider is deleting.
	InstanceDeleting = "deleting"
	// InstanceHold is an instance an operator holds: never reused nor deleted.
	InstanceHold = "hold"
	// InstanceAborted is a launch the cloud refused for quota (P24): not a
	// failure of the request; it is deleted and the launch is retried.
	InstanceAborted = "aborted"
	// InstanceFailed is a launch that failed; it is deleted.
	InstanceFailed = "failed"
)

// DefaultProviderPriority is a provider's priority when its configuration
// gives none (P11): lower numbers are served first.
const DefaultProviderPriority = 100

// ProviderConfig is a provider's whole configuration as applied.
type ProviderConfig struct {
	Name string `msgpack:"name" json:"Name"`
	// Driver names the driver that provisions the provider's instances
	// (sim, static).
	Driver string `msgpack:"driver" json:"Driver"`
	// Priority orders providers: lower numbers are served first (P11).
	Priority int `msgpack:"prio" json:"Priority"`
	// LaunchRetries bounds the launches tried for one instance of a
	// request before the request fails.
	LaunchRetries int            `msgpack:"retries,omitempty" json:"LaunchRetries"`
	Pools         []ProviderPool `msgpack:"pools" json:"Pools"`
	Labels        []LabelConfig  `msgpack:"labels" json:"Labels"`
	// Sim configures the sim driver.
	Sim *SimConfig `msgpack:"sim,omitempty" json:"Sim"`
	// Static configures the static driver.
	Static *StaticConfig `msgpack:"static,omitempty" json:"Static"`
}

// ProviderPool is a pool of a provider: the labels it serves (P26), its
// limits (0 is none) and the attributes copied onto its instances (P21).
type ProviderPool struct {
	Name           string            `msgpack:"name" json:"Name"`
	MaxServers     int               `msgpack:"maxsrv,omitempty" json:"MaxServers"`
	MaxCores       int               `msgpack:"maxcores,omitempty" json:"MaxCores"`
	MaxRAMMB       int               `msgpack:"maxram,omitempty" json:"MaxRAMMB"`
	Labels         []string          `msgpack:"labels" json:"Labels"`
	NodeAttributes map[string]string `msgpack:"attrs,omitempty" json:"NodeAttributes"`
}

// LabelConfig is how a provider launches one label.
type LabelConfig struct {
	Name         string `msgpack:"name" json:"Name"`
	InstanceType string `msgpack:"type,omitempty" json:"InstanceType"`
	// MinReady is how many ready, unassigned instances of the label the
	// launcher keeps.
	MinReady int `msgpack:"minready,omitempty" json:"MinReady"`
}

// SimConfig is the sim driver's simulated cloud.
type SimConfig struct {
	InstanceTypes map[string]SimInstanceType `msgpack:"types" json:"InstanceTypes"`
	Quota         SimQuota                   `msgpack:"quota" json:"Quota"`
	// BootTime is how long an instance builds, in nanoseconds.
	BootTime int64 `msgpack:"boot,omitempty" json:"BootTime"`
}

// SimInstanceType is the resources of one simulated instance type.
type SimInstanceType struct {
	Cores int `msgpack:"cores" json:"Cores"`
	RAMMB int `msgpack:"ram" json:"RAMMB"`
}

// SimQuota is the simulated cloud's quota; 0 is unlimited.
type SimQuota struct {
	Instances int `msgpack:"instances,omitempty" json:"Instances"`
	Cores     int `msgpack:"cores,omitempty" json:"Cores"`
	RAMMB     int `msgpack:"ram,omitempty" json:"RAMMB"`
}

// StaticConfig is the static driver's hosts.
type StaticConfig struct {
	Hosts []StaticHost `msgpack:"hosts" json:"Hosts"`
}

// StaticHost is one machine the static driver hands out.
type StaticHost struct {
	Name    string   `msgpack:"name" json:"Name"`
	Address string   `msgpack:"addr" json:"Address"`
	Labels  []string `msgpack:"labels" json:"Labels"`
}

// ProviderApplied records a provider's configuration applied: a new
// configuration is a new provider generation (P6), and a configuration
// equal by value to the current one is never applied again (P16).
type ProviderApplied struct {
	Provider ProviderConfig `msgpack:"p" json:"Provider"`
}

// EntityKeys implements Payload.
func (p *ProviderApplied) EntityKeys() []Key {
	return []Key{{Kind: KindProvider, Value: p.Provider.Name}}
}

// ProviderDeleted records a provider removed.
type ProviderDeleted struct {
	Name string `msgpack:"name" json:"Name"`
}

// EntityKeys implements Payload.
func (p *ProviderDeleted) EntityKeys() []Key { return []Key{{Kind: KindProvider, Value: p.Name}} }

// ProviderPaused records a provider pausing at quota for a request (P7,
// P24) or, with Paused false, resuming.
type ProviderPaused struct {
	Name string `msgpack:"name" json:"Name"`
	// ConfigIndex is the provider generation this concerns; an event for
	// an older generation changes nothing.
	ConfigIndex uint64 `msgpack:"cfg" json:"ConfigIndex"`
	Paused      bool   `msgpack:"paused,omitempty" json:"Paused"`
	RequestID   string `msgpack:"req,omitempty" json:"RequestID"`
	Reason      string `msgpack:"reason,omitempty" json:"Reason"`
}

// EntityKeys implements Payload.
func (p *ProviderPaused) EntityKeys() []Key {
	keys := []Key{{Kind: KindProvider, Value: p.Name}}
	if p.RequestID != "" {
		keys = append(keys, Key{Kind: KindNodeRequest, Value: p.RequestID})
	}
	return keys
}

// ProviderLabelErrored records a permanent configuration error found at
// runtime for one label of a provider generation (P2): requests for it
// fail at once until a new configuration is applied.
type ProviderLabelErrored struct {
	Name        string `msgpack:"name" json:"Name"`
	ConfigIndex uint64 `msgpack:"cfg" json:"ConfigIndex"`
	Label       string `msgpack:"label" json:"Label"`
	Reason      string `msgpack:"reason" json:"Reason"`
}

// EntityKeys implements Payload.
func (p *ProviderLabelErrored) EntityKeys() []Key {
	return []Key{{Kind: KindProvider, Value: p.Name}}
}

// Tenant is a tenant's resource limits across every provider (P13); 0 is
// no limit.
type Tenant struct {
	Name       string `msgpack:"name" json:"Name"`
	MaxServers int    `msgpack:"maxsrv,omitempty" json:"MaxServers"`
	MaxCores   int    `msgpack:"maxcores,omitempty" json:"MaxCores"`
	MaxRAMMB   int    `msgpack:"maxram,omitempty" json:"MaxRAMMB"`
}

// TenantApplied records a tenant created or its limits changed.
type TenantApplied struct {
	Tenant Tenant `msgpack:"t" json:"Tenant"`
}

// EntityKeys implements Payload.
func (p *TenantApplied) EntityKeys() []Key { return []Key{{Kind: KindTenant, Value: p.Tenant.Name}} }

// TenantDeleted records a tenant removed.
type TenantDeleted struct {
	Name string `msgpack:"name" json:"Name"`
}

// EntityKeys implements Payload.
func (p *TenantDeleted) EntityKeys() []Key { return []Key{{Kind: KindTenant, Value: p.Name}} }

// NodeRequest is what a requestor asks for: one instance per label.
type NodeRequest struct {
	ID     string   `msgpack:"id" json:"ID"`
	Labels []string `msgpack:"labels" json:"Labels"`
	// Requestor names who asked (a CI build, the launcher's min-ready).
	Requestor string `msgpack:"by,omitempty" json:"Requestor"`
	Tenant    string `msgpack:"tenant,omitempty" json:"Tenant"`
	// RelativePriority orders requests: lower numbers are handled first.
	RelativePriority int `msgpack:"prio,omitempty" json:"RelativePriority"`
	// MinReady marks a request the launcher made to keep min-ready
	// instances (P23).
	MinReady bool `msgpack:"minready,omitempty" json:"MinReady"`
}

// NodeRequestCreated records a node request made.
type NodeRequestCreated struct {
	Request NodeRequest `msgpack:"r" json:"Request"`
}

// EntityKeys implements Payload.
func (p *NodeRequestCreated) EntityKeys() []Key {
	keys := []Key{{Kind: KindNodeRequest, Value: p.Request.ID}}
	if p.Request.Tenant != "" {
		keys = append(keys, Key{Kind: KindTenant, Value: p.Request.Tenant})
	}
	return keys
}

// NodeRequestStateChanged records a request accepted by a provider
// (pending) or released back to every provider (requested).
type NodeRequestStateChanged struct {
	ID       string `msgpack:"id" json:"ID"`
	State    string `msgpack:"state" json:"State"`
	Provider string `msgpack:"prov,omitempty" json:"Provider"`
	Pool     string `msgpack:"pool,omitempty" json:"Pool"`
	Reason   string `msgpack:"reason,omitempty" json:"Reason"`
}

// EntityKeys implements Payload.
func (p *NodeRequestStateChanged) EntityKeys() []Key {
	return requestProviderKeys(p.ID, p.Provider)
}

func requestProviderKeys(id, provider string) []Key {
	keys := []Key{{Kind: KindNodeRequest, Value: id}}
	if provider != "" {
		keys = append(keys, Key{Kind: KindProvider, Value: provider})
	}
	return keys
}

// NodeRequestDeclined records a provider declining a request it cannot
// serve (P1, P7), with the reason.
type NodeRequestDeclined struct {
	ID       string `msgpack:"id" json:"ID"`
	Provider string `msgpack:"prov" json:"Provider"`
	Reason   string `msgpack:"reason" json:"Reason"`
}

// EntityKeys implements Payload.
func (p *NodeRequestDeclined) EntityKeys() []Key { return requestProviderKeys(p.ID, p.Provider) }

// NodeRequestFulfilled records every instance of a request ready and
// handed to its requestor.
type NodeRequestFulfilled struct {
	ID        string   `msgpack:"id" json:"ID"`
	Provider  string   `msgpack:"prov" json:"Provider"`
	Instances []string `msgpack:"inst" json:"Instances"`
}

// EntityKeys implements Payload.
func (p *NodeRequestFulfilled) EntityKeys() []Key {
	keys := requestProviderKeys(p.ID, p.Provider)
	for _, id := range p.Instances {
		keys = append(keys, Key{Kind: KindInstance, Value: id})
	}
	return keys
}

// NodeRequestFailed records a request that cannot be fulfilled.
type NodeRequestFailed struct {
	ID       string `msgpack:"id" json:"ID"`
	Provider string `msgpack:"prov,omitempty" json:"Provider"`
	Reason   string `msgpack:"reason" json:"Reason"`
}

// EntityKeys implements Payload.
func (p *NodeRequestFailed) EntityKeys() []Key { return requestProviderKeys(p.ID, p.Provider) }

// NodeRequestDeleted records a request removed by its requestor.
type NodeRequestDeleted struct {
	ID string `msgpack:"id" json:"ID"`
}

// EntityKeys implements Payload.
func (p *NodeRequestDeleted) EntityKeys() []Key { return []Key{{Kind: KindNodeRequest, Value: p.ID}} }

// Instance is an instance as launched.
type Instance struct {
	ID       string `msgpack:"id" json:"ID"`
	Provider string `msgpack:"prov" json:"Provider"`
	// ConfigIndex is the provider generation that launched it.
	ConfigIndex  uint64 `msgpack:"cfg" json:"ConfigIndex"`
	Pool         string `msgpack:"pool" json:"Pool"`
	Label        string `msgpack:"label" json:"Label"`
	InstanceType string `msgpack:"type,omitempty" json:"InstanceType"`
	Cores        int    `msgpack:"cores,omitempty" json:"Cores"`
	RAMMB        int    `msgpack:"ram,omitempty" json:"RAMMB"`
	// RequestID is the request it is launched for ("" for none).
	RequestID string `msgpack:"req,omitempty" json:"RequestID"`
	// Requestor is who asked for it (P12).
	Requestor string `msgpack:"by,omitempty" json:"Requestor"`
	Tenant    string `msgpack:"tenant,omitempty" json:"Tenant"`
	// Attributes are the pool's node attributes (P21).
	Attributes map[string]string `msgpack:"attrs,omitempty" json:"Attributes"`
}

// InstanceCreated records a launch started: the instance is building.
type InstanceCreated struct {
	Instance Instance `msgpack:"i" json:"Instance"`
}

// EntityKeys implements Payload.
func (p *InstanceCreated) EntityKeys() []Key {
	keys := []Key{{Kind: KindInstance, Value: p.Instance.ID}, {Kind: KindProvider, Value: p.Instance.Provider}}
	if p.Instance.RequestID != "" {
		keys = append(keys, Key{Kind: KindNodeRequest, Value: p.Instance.RequestID})
	}
	return keys
}

// InstanceStateChanged records an instance's new state, with what the
// provider reported (its external id and addresses once ready).
type InstanceStateChanged struct {
	ID         string   `msgpack:"id" json:"ID"`
	State      string   `msgpack:"state" json:"State"`
	ExternalID string   `msgpack:"ext,omitempty" json:"ExternalID"`
	Addresses  []string `msgpack:"addrs,omitempty" json:"Addresses"`
	Reason     string   `msgpack:"reason,omitempty" json:"Reason"`
}

// EntityKeys implements Payload.
func (p *InstanceStateChanged) EntityKeys() []Key { return []Key{{Kind: KindInstance, Value: p.ID}} }

// InstanceAssigned records a ready instance assigned to a request (P3,
// P4), recording the request's requestor on it (P12).
type InstanceAssigned struct {
	ID        string `msgpack:"id" json:"ID"`
	RequestID string `msgpack:"req" json:"RequestID"`
	Requestor string `msgpack:"by,omitempty" json:"Requestor"`
	Tenant    string `msgpack:"tenant,omitempty" json:"Tenant"`
}

// EntityKeys implements Payload.
func (p *InstanceAssigned) EntityKeys() []Key {
	return []Key{{Kind: KindInstance, Value: p.ID}, {Kind: KindNodeRequest, Value: p.RequestID}}
}

// InstanceReleased records an instance no longer assigned to a request
// (the request vanished, P20): a ready instance is free for reuse.
type InstanceReleased struct {
	ID        string `msgpack:"id" json:"ID"`
	RequestID string `msgpack:"req" json:"RequestID"`
}

// EntityKeys implements Payload.
func (p *InstanceReleased) EntityKeys() []Key {
	return []Key{{Kind: KindInstance, Value: p.ID}, {Kind: KindNodeRequest, Value: p.RequestID}}
}

// InstanceDeleted records an instance gone from its provider.
type InstanceDeleted struct {
	ID string `msgpack:"id" json:"ID"`
}

// EntityKeys implements Payload.
func (p *InstanceDeleted) EntityKeys() []Key { return []Key{{Kind: KindInstance, Value: p.ID}} }

func init() {
	for _, t := range []Type{
		{Name: "ProviderApplied", New: func() Payload { return new(ProviderApplied) }},
		{Name: "ProviderDeleted", New: func() Payload { return new(ProviderDeleted) }},
		{Name: "ProviderPaused", New: func() Payload { return new(ProviderPaused) }},
		{Name: "ProviderLabelErrored", New: func() Payload { return new(ProviderLabelErrored) }},
		{Name: "TenantApplied", New: func() Payload { return new(TenantApplied) }},
		{Name: "TenantDeleted", New: func() Payload { return new(TenantDeleted) }},
		{Name: "NodeRequestCreated", New: func() Payload { return new(NodeRequestCreated) }},
		{Name: "NodeRequestStateChanged", New: func() Payload { return new(NodeRequestStateChanged) }},
		{Name: "NodeRequestDeclined", New: func() Payload { return new(NodeRequestDeclined) }},
		{Name: "NodeRequestFulfilled", New: func() Payload { return new(NodeRequestFulfilled) }},
		{Name: "NodeRequestFailed", New: func() Payload { return new(NodeRequestFailed) }},
		{Name: "NodeRequestDeleted", New: func() Payload { return new(NodeRequestDeleted) }},
		{Name: "InstanceCreated", New: func() Payload { return new(InstanceCreated) }},
		{Name: "InstanceStateChanged", New: func() Payload { return new(InstanceStateChanged) }},
		{Name: "InstanceAssigned", New: func() Payload { return new(InstanceAssigned) }},
		{Name: "InstanceReleased", New: func() Payload { return new(InstanceReleased) }},
		{Name: "InstanceDeleted", New: func() Payload { return new(InstanceDeleted) }},
	} {
		t.Version = 1
		for _, topic := range []string{"Provider", "Tenant", "NodeRequest", "Instance"} {
			if len(t.Name) >= len(topic) && t.Name[:len(topic)] == topic {
				t.Topic = topic
			}
		}
		Register(t)
	}
}
