package launcher

import (
	"strings"

	"github.com/ordoplane/ordo/projections"
)

func stamp[T any](r projections.Row, what string, set func(*T, uint64, uint64)) (*T, error) {
	v, err := decode[T](r, what)
	if err != nil {
		return nil, err
	}
	set(v, r.CreateIndex, r.ModifyIndex)
	return v, nil
}

func providerRow(r projections.Row) (*Provider, error) {
	return stamp(r, "provider", func(p *Provider, c, m uint64) { p.CreateIndex, p.ModifyIndex = c, m })
}

func tenantRow(r projections.Row) (*Tenant, error) {
	return stamp(r, "tenant", func(p *Tenant, c, m uint64) { p.CreateIndex, p.ModifyIndex = c, m })
}

func requestRow(r projections.Row) (*Request, error) {
	return stamp(r, "node request", func(p *Request, c, m uint64) { p.CreateIndex, p.ModifyIndex = c, m })
}

func instanceRow(r projections.Row) (*Instance, error) {
	return stamp(r, "instance", func(p *Instance, c, m uint64) { p.CreateIndex, p.ModifyIndex = c, m })
}

// GetProvider returns the provider called name, or projections.ErrNotFound.
func GetProvider(v projections.View, name string) (*Provider, error) {
	r, err := v.Get(ProvidersTable, name)
	if err != nil {
		return nil, err
	}
	return providerRow(r)
}

// Providers returns every provider, by name.
func Providers(v projections.View) ([]*Provider, error) {
	var out []*Provider
	err := v.Scan(ProvidersTable, "", false, func(_ string, r projections.Row) error {
		p, err := providerRow(r)
		if err == nil {
			out = append(out, p)
		}
		return err
	})
	return out, err
}

// GetTenant returns the tenant called name, or projections.ErrNotFound.
func GetTenant(v projections.View, name string) (*Tenant, error) {
	r, err := v.Get(TenantsTable, name)
	if err != nil {
		return nil, err
	}
	return tenantRow(r)
}

// Tenants returns every tenant, by name.
func Tenants(v projections.View) ([]*Tenant, error) {
	var out []*Tenant
	err := v.Scan(TenantsTable, "", false, func(_ string, r projections.Row) error {
		t, err := tenantRow(r)
		if err == nil {
			out = append(out, t)
		}
		return err
	})
	return out, err
}

// GetRequest returns the node request with id, or projections.ErrNotFound.
func GetRequest(v projections.View, id string) (*Request, error) {
	r, err := v.Get(RequestsTable, id)
	if err != nil {
		return nil, err
	}
	return requestRow(r)
}

// ResolveRequest returns the request whose id is idOrPrefix or the one
// whose id starts with it.
func ResolveRequest(v projections.View, idOrPrefix string) (*Request, error) {
	r, err := projections.Resolve(v, RequestsTable, "node request", idOrPrefix)
	if err != nil {
		return nil, err
	}
	return requestRow(r)
}

// ScanRequests calls fn with each request whose id starts with prefix,
// from id from (inclusive, "" for the first), by id.
func ScanRequests(v projections.View, prefix, from string, fn func(*Request) error) error {
	return v.ScanFrom(RequestsTable, prefix, from, false, func(_ string, r projections.Row) error {
		req, err := requestRow(r)
		if err != nil {
			return err
		}
		return fn(req)
	})
}

// OpenRequests calls fn with each request in state (requested or
// pending), in the order providers handle them: relative priority, then
// creation.
func OpenRequests(v projections.View, state string, fn func(*Request) error) error {
	return v.Scan(RequestsByStateTable, state+"\x00", false, func(key string, _ projections.Row) error {
		id := key[strings.LastIndexByte(key, 0)+1:]
		r, err := GetRequest(v, id)
		if err != nil {
			return err
		}
		return fn(r)
	})
}

func getInstance(v projections.View, id string) (*Instance, error) {
	r, err := v.Get(InstancesTable, id)
	if err != nil {
		return nil, err
	}
	return instanceRow(r)
}

// GetInstance returns the instance with id, or projections.ErrNotFound.
func GetInstance(v projections.View, id string) (*Instance, error) { return getInstance(v, id) }

// ResolveInstance returns the instance whose id is idOrPrefix or the one
// whose id starts with it.
func ResolveInstance(v projections.View, idOrPrefix string) (*Instance, error) {
	r, err := projections.Resolve(v, InstancesTable, "instance", idOrPrefix)
	if err != nil {
		return nil, err
	}
	return instanceRow(r)
}

// ScanInstances calls fn with each instance whose id starts with prefix,
// from id from (inclusive), by id.
func ScanInstances(v projections.View, prefix, from string, fn func(*Instance) error) error {
	return v.ScanFrom(InstancesTable, prefix, from, false, func(_ string, r projections.Row) error {
		in, err := instanceRow(r)
		if err != nil {
			return err
		}
		return fn(in)
	})
}

// ProviderInstances returns every instance of provider (of any
// generation), by id.
func ProviderInstances(v projections.View, provider string) ([]*Instance, error) {
	return indexed(v, InstancesByProviderTable, provider)
}

// TenantInstances returns every instance counted against tenant, by id.
func TenantInstances(v projections.View, tenant string) ([]*Instance, error) {
	return indexed(v, InstancesByTenantTable, tenant)
}

func indexed(v projections.View, table, owner string) ([]*Instance, error) {
	var out []*Instance
	err := v.Scan(table, owner+"\x00", false, func(key string, _ projections.Row) error {
		in, err := getInstance(v, key[len(owner)+1:])
		if err == nil {
			out = append(out, in)
		}
		return err
	})
	return out, err
}

// Usage is what a set of instances holds.
type Usage struct {
	Servers, Cores, RAMMB int
}

// Add returns u plus o.
func (u Usage) Add(o Usage) Usage {
	return Usage{Servers: u.Servers + o.Servers, Cores: u.Cores + o.Cores, RAMMB: u.RAMMB + o.RAMMB}
}

// UsageOf sums the instances (building ones included, P19).
func UsageOf(insts []*Instance) Usage {
	var u Usage
	for _, in := range insts {
		u = u.Add(Usage{Servers: 1, Cores: in.Cores, RAMMB: in.RAMMB})
	}
	return u
}
