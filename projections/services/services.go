package services

import (
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
)

// The tables of the projection.
const (
	// Table holds one row per registration, keyed by id.
	Table = "services"
	// ByNameTable indexes registrations by NameKey(namespace, name)+id.
	ByNameTable = "services_by_name"
	// ByAllocTable indexes registrations by "<alloc>\x00<id>".
	ByAllocTable = "services_by_alloc"
	// ByNodeTable indexes registrations by "<node>\x00<id>".
	ByNodeTable = "services_by_node"
	// NameChangesTable holds one empty row per service ever registered,
	// keyed NameKey(namespace, name), whose modify index is the last
	// change to any of its instances. It is key-watched: a blocking read
	// of one service wakes only when that service changes.
	NameChangesTable = "services_name_changes"
)

// AllNamespaces is the namespace argument that selects every namespace.
const AllNamespaces = "*"

func init() {
	projections.WatchKeys(NameChangesTable)
	for _, t := range []string{ByNameTable, ByAllocTable, ByNodeTable} {
		projections.ScanOnly(t)
	}
}

// NameKey returns the key of a service in NameChangesTable, and the
// prefix of its instances in ByNameTable.
func NameKey(ns, name string) string { return ns + "\x00" + name + "\x00" }

// AllocKey returns the prefix of an allocation's registrations in ByAllocTable.
func AllocKey(alloc string) string { return alloc + "\x00" }

// NodeKey returns the prefix of a node's registrations in ByNodeTable.
func NodeKey(node string) string { return node + "\x00" }

// Projection maintains the services tables.
type Projection struct{}

var _ projections.Projection = Projection{}

// Name implements projections.Projection.
func (Projection) Name() string { return "services" }

// Version implements projections.Projection.
func (Projection) Version() int { return 1 }

// Tables implements projections.Projection.
func (Projection) Tables() []string {
	return []string{Table, ByNameTable, ByAllocTable, ByNodeTable, NameChangesTable}
}

// Apply implements projections.Projection.
func (Projection) Apply(tx *projections.Tx, ev *events.Event) error {
	p, err := events.DecodeIf(ev, "ServicesRegistered", "ServicesDeregistered", "AllocsClientUpdated",
		"AllocsDesiredUpdated", "AllocsDeleted", "NodeStatusUpdated", "NodeDeregistered")
	if p == nil || err != nil {
		return err
	}
	switch p := p.(type) {
	case *events.ServicesRegistered:
		for i := range p.Services {
			if err := register(tx, &p.Services[i]); err != nil {
				return err
			}
		}
	case *events.ServicesDeregistered:
		for _, id := range p.IDs {
			if err := remove(tx, id); err != nil {
				return err
			}
		}
	case *events.AllocsClientUpdated:
		for _, u := range p.Updates {
			if clientTerminal(u.ClientStatus) {
				if err := removeUnder(tx, ByAllocTable, AllocKey(u.ID)); err != nil {
					return err
				}
			}
		}
	case *events.AllocsDesiredUpdated:
		for _, u := range p.Updates {
			if clientTerminal(u.ClientStatus) { // lost, decided by the servers
				if err := removeUnder(tx, ByAllocTable, AllocKey(u.ID)); err != nil {
					return err
				}
			}
		}
	case *events.AllocsDeleted:
		for _, id := range p.IDs {
			if err := removeUnder(tx, ByAllocTable, AllocKey(id)); err != nil {
				return err
			}
		}
	case *events.NodeStatusUpdated:
		if p.Status == events.NodeStatusDown {
			return removeUnder(tx, ByNodeTable, NodeKey(p.ID))
		}
	case *events.NodeDeregistered:
		return removeUnder(tx, ByNodeTable, NodeKey(p.ID))
	}
	return nil
}

func clientTerminal(status string) bool {
	switch status {
	case events.AllocClientComplete, events.AllocClientFailed, events.AllocClientLost:
		return true
	}
	return false
}

// register writes s, moving its index rows when its name, allocation or
// node changed; an unchanged registration writes nothing.
func register(tx *projections.Tx, s *events.ServiceRegistration) error {
	in := *s
	in.CreateIndex, in.ModifyIndex = 0, 0
	old, err := get(tx.View, s.ID)
	if err != nil && !errors.Is(err, projections.ErrNotFound) {
		return err
	}
	if old != nil {
		old.CreateIndex, old.ModifyIndex = 0, 0
		if Equal(old, &in) {
			return nil
		}
	}
	b, err := msgpack.Marshal(&in)
	if err != nil {
		return fmt.Errorf("encode service registration %q: %w", s.ID, err)
	}
	if err := tx.Put(Table, s.ID, b); err != nil {
		return err
	}
	if old != nil && old.Namespace == in.Namespace && old.ServiceName == in.ServiceName &&
		old.AllocID == in.AllocID && old.NodeID == in.NodeID {
		return touchName(tx, in.Namespace, in.ServiceName)
	}
	if old != nil {
		if err := dropIndexes(tx, old); err != nil {
			return err
		}
	}
	for _, ix := range indexKeys(&in) {
		if err := tx.PutIndex(ix[0], ix[1]); err != nil {
			return err
		}
	}
	return touchName(tx, in.Namespace, in.ServiceName)
}

// remove deletes registration id and its index rows; a missing id is
// nothing to do.
func remove(tx *projections.Tx, id string) error {
	old, err := get(tx.View, id)
	if errors.Is(err, projections.ErrNotFound) {
		return nil
	} else if err != nil {
		return err
	}
	if err := tx.DeleteKnown(Table, id); err != nil {
		return err
	}
	return dropIndexes(tx, old)
}

// removeUnder removes every registration listed in index under prefix
// (an allocation's or a node's), in id order.
func removeUnder(tx *projections.Tx, index, prefix string) error {
	var ids []string
	err := tx.View.Scan(index, prefix, false, func(k string, _ projections.Row) error {
		ids = append(ids, strings.TrimPrefix(k, prefix))
		return nil
	})
	if err != nil {
		return err
	}
	for _, id := range ids {
		if err := remove(tx, id); err != nil {
			return err
		}
	}
	return nil
}

func dropIndexes(tx *projections.Tx, s *events.ServiceRegistration) error {
	for _, ix := range indexKeys(s) {
		if err := tx.DeleteKnown(ix[0], ix[1]); err != nil {
			return err
		}
	}
	return touchName(tx, s.Namespace, s.ServiceName)
}

// touchName moves the service's NameChangesTable row to this entry.
func touchName(tx *projections.Tx, ns, name string) error {
	return tx.Put(NameChangesTable, NameKey(ns, name), nil)
}

func indexKeys(s *events.ServiceRegistration) [3][2]string {
	return [3][2]string{
		{ByNameTable, NameKey(s.Namespace, s.ServiceName) + s.ID},
		{ByAllocTable, AllocKey(s.AllocID) + s.ID},
		{ByNodeTable, NodeKey(s.NodeID) + s.ID},
	}
}

// Equal reports whether a and b register the same thing, indexes aside:
// an update that changes nothing is not appended. A check counts by its
// name and status: its output and time alone changing are not a change,
// so a client re-sending every result does not grow the log.
func Equal(a, b *events.ServiceRegistration) bool {
	x, y := *a, *b
	x.CreateIndex, x.ModifyIndex, y.CreateIndex, y.ModifyIndex = 0, 0, 0, 0
	norm := func(s *events.ServiceRegistration) {
		if len(s.Tags) == 0 {
			s.Tags = nil
		}
		checks := make([]events.CheckStatus, len(s.Checks))
		for i, c := range s.Checks {
			checks[i] = events.CheckStatus{Name: c.Name, Status: c.Status}
		}
		s.Checks = checks
		if len(checks) == 0 {
			s.Checks = nil
		}
	}
	norm(&x)
	norm(&y)
	return reflect.DeepEqual(x, y)
}

func get(v projections.View, id string) (*events.ServiceRegistration, error) {
	r, err := v.Get(Table, id)
	if err != nil {
		return nil, err
	}
	return fromRow(r)
}

func fromRow(r projections.Row) (*events.ServiceRegistration, error) {
	var s events.ServiceRegistration
	if err := msgpack.Unmarshal(r.Value, &s); err != nil {
		return nil, fmt.Errorf("decode service registration: %w", err)
	}
	s.CreateIndex, s.ModifyIndex = r.CreateIndex, r.ModifyIndex
	return &s, nil
}
