package services

import (
	"errors"
	"strings"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
)

// Get returns registration id, or projections.ErrNotFound.
func Get(v projections.View, id string) (*events.ServiceRegistration, error) { return get(v, id) }

// ByName returns the instances of service name in namespace ns, in id
// order.
func ByName(v projections.View, ns, name string) ([]*events.ServiceRegistration, error) {
	return collect(v, ByNameTable, NameKey(ns, name))
}

// ByAlloc returns the registrations of an allocation, in id order.
func ByAlloc(v projections.View, alloc string) ([]*events.ServiceRegistration, error) {
	return collect(v, ByAllocTable, AllocKey(alloc))
}

// ByNode returns the registrations of the allocations on a node, in id
// order.
func ByNode(v projections.View, node string) ([]*events.ServiceRegistration, error) {
	return collect(v, ByNodeTable, NodeKey(node))
}

// NameIndex returns the index of the last change to any instance of
// service name in namespace ns; 0 when it was never registered.
func NameIndex(v projections.View, ns, name string) (uint64, error) {
	r, err := v.Get(NameChangesTable, NameKey(ns, name))
	if errors.Is(err, projections.ErrNotFound) {
		return 0, nil
	}
	return r.ModifyIndex, err
}

// Scan calls fn with every registration in namespace ns (AllNamespaces:
// every namespace), by namespace, service name, then id; fn may return an
// error to stop, which Scan returns.
func Scan(v projections.View, ns string, fn func(*events.ServiceRegistration) error) error {
	prefix := ns + "\x00"
	if ns == AllNamespaces {
		prefix = ""
	}
	return v.Scan(ByNameTable, prefix, false, func(k string, _ projections.Row) error {
		s, err := get(v, k[strings.LastIndexByte(k, 0)+1:])
		if errors.Is(err, projections.ErrNotFound) {
			return nil
		} else if err != nil {
			return err
		}
		return fn(s)
	})
}

func collect(v projections.View, index, prefix string) ([]*events.ServiceRegistration, error) {
	var ids []string
	err := v.Scan(index, prefix, false, func(k string, _ projections.Row) error {
		ids = append(ids, k[len(prefix):])
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]*events.ServiceRegistration, 0, len(ids))
	for _, id := range ids {
		s, err := get(v, id)
		if errors.Is(err, projections.ErrNotFound) {
			continue
		} else if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}
