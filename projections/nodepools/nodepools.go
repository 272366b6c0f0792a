package nodepools

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
)

// Table holds one row per node pool that is not built in.
const Table = "node_pools"

// The built-in pools: every node without a pool is in Default; a job in
// All may run on the nodes of every pool.
const (
	Default = "default"
	All     = "all"
)

// NodePool is a node pool as readers see it: Nomad's api.NodePool.
type NodePool struct {
	Name        string
	Description string
	Meta        map[string]string
	CreateIndex uint64
	ModifyIndex uint64
}

// BuiltIn returns the built-in pool called name, or nil.
func BuiltIn(name string) *NodePool {
	switch name {
	case Default:
		return &NodePool{Name: Default, Description: "Default node pool.", CreateIndex: 1, ModifyIndex: 1}
	case All:
		return &NodePool{Name: All, Description: "Node pool with all nodes in the cluster.", CreateIndex: 1, ModifyIndex: 1}
	}
	return nil
}

// Projection maintains the node pools table.
type Projection struct{}

var _ projections.Projection = Projection{}

// Name implements projections.Projection.
func (Projection) Name() string { return "nodepools" }

// Version implements projections.Projection.
func (Projection) Version() int { return 1 }

// Tables implements projections.Projection.
func (Projection) Tables() []string { return []string{Table} }

// Apply implements projections.Projection. A row holds the encoded payload
// of the pool's last NodePoolUpserted.
func (Projection) Apply(tx *projections.Tx, ev *events.Event) error {
	switch ev.Type {
	case "NodePoolUpserted":
		raw, err := events.Upcast(ev)
		if err != nil {
			return err
		}
		return tx.Put(Table, ev.Key(events.KindNodePool), raw)
	case "NodePoolDeleted":
		_, err := tx.Delete(Table, ev.Key(events.KindNodePool))
		return err
	case "NodeRegistered":
		p, err := events.DecodeIf(ev, "NodeRegistered")
		if err != nil || p == nil {
			return err
		}
		return implicitPool(tx, p.(*events.NodeRegistered).Node.NodePool)
	}
	return nil
}

// implicitPool creates the row of pool name, named by a registering node,
// when it is neither built in nor present.
func implicitPool(tx *projections.Tx, name string) error {
	if name == "" || BuiltIn(name) != nil {
		return nil
	}
	if _, err := tx.Get(Table, name); err == nil || !errors.Is(err, projections.ErrNotFound) {
		return err
	}
	raw, err := events.Marshal(&events.NodePoolUpserted{Pool: events.NodePool{Name: name}})
	if err != nil {
		return err
	}
	return tx.Put(Table, name, raw)
}

func fromRow(r projections.Row) (*NodePool, error) {
	var p events.NodePoolUpserted
	if err := msgpack.Unmarshal(r.Value, &p); err != nil {
		return nil, fmt.Errorf("decode node pool row: %w", err)
	}
	return &NodePool{Name: p.Pool.Name, Description: p.Pool.Description, Meta: p.Pool.Meta,
		CreateIndex: r.CreateIndex, ModifyIndex: r.ModifyIndex}, nil
}

// Get returns the pool called name, or projections.ErrNotFound.
func Get(v projections.View, name string) (*NodePool, error) {
	if b := BuiltIn(name); b != nil {
		return b, nil
	}
	r, err := v.Get(Table, name)
	if err != nil {
		return nil, err
	}
	return fromRow(r)
}

// List returns the pools whose name starts with prefix, built-in ones
// included, by name.
func List(v projections.View, prefix string) ([]*NodePool, error) {
	var out []*NodePool
	for _, name := range []string{All, Default} {
		if strings.HasPrefix(name, prefix) {
			out = append(out, BuiltIn(name))
		}
	}
	err := v.Scan(Table, prefix, false, func(_ string, r projections.Row) error {
		p, err := fromRow(r)
		if err != nil {
			return err
		}
		out = append(out, p)
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, err
}
