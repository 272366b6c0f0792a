package namespaces

import (
	"fmt"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
)

// Table holds one row per namespace.
const Table = "namespaces"

// Default is the namespace every cluster has and nobody may delete.
const Default = "default"

// Namespace is a namespace as readers see it.
type Namespace struct {
	Name        string
	Description string
	Meta        map[string]string
	// VariablesQuota bounds the bytes of encrypted variable data the
	// namespace may hold; 0 is no limit (N13, ordo's own field).
	VariablesQuota int64
	CreateIndex    uint64
	ModifyIndex    uint64
}

// Projection maintains the namespaces table.
type Projection struct{}

var _ projections.Projection = Projection{}

// Name implements projections.Projection.
func (Projection) Name() string { return "namespaces" }

// Version implements projections.Projection.
func (Projection) Version() int { return 2 }

// Tables implements projections.Projection.
func (Projection) Tables() []string { return []string{Table} }

// Apply implements projections.Projection. A row holds the encoded
// payload of the namespace's last NamespaceUpserted at its current version,
// so applying a current event decodes nothing.
func (Projection) Apply(tx *projections.Tx, ev *events.Event) error {
	switch ev.Type {
	case "NamespaceUpserted":
		raw, err := events.Upcast(ev)
		if err != nil {
			return err
		}
		return tx.Put(Table, ev.Key(events.KindNamespace), raw)
	case "NamespaceDeleted":
		_, err := tx.Delete(Table, ev.Key(events.KindNamespace))
		return err
	}
	return nil
}

func fromRow(r projections.Row) (*Namespace, error) {
	var p events.NamespaceUpserted
	if err := msgpack.Unmarshal(r.Value, &p); err != nil {
		return nil, fmt.Errorf("decode namespace row: %w", err)
	}
	ns := p.Namespace
	return &Namespace{Name: ns.Name, Description: ns.Description, Meta: ns.Meta, VariablesQuota: ns.VariablesQuota,
		CreateIndex: r.CreateIndex, ModifyIndex: r.ModifyIndex}, nil
}

// Get returns the namespace called name, or projections.ErrNotFound.
func Get(v projections.View, name string) (*Namespace, error) {
	r, err := v.Get(Table, name)
	if err != nil {
		return nil, err
	}
	return fromRow(r)
}

// List returns the namespaces whose name starts with prefix, by name.
func List(v projections.View, prefix string) ([]*Namespace, error) {
	var out []*Namespace
	err := v.Scan(Table, prefix, false, func(_ string, r projections.Row) error {
		ns, err := fromRow(r)
		if err != nil {
			return err
		}
		out = append(out, ns)
		return nil
	})
	return out, err
}
