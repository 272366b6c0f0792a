package services

import (
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	ps "github.com/ordoplane/ordo/projections/services"
)

// ForAllocs returns the deregistration of every service instance of the
// allocations, with reason, for a command that makes them terminal or
// collects them to append to its own events; nil when they have none.
func ForAllocs(v projections.View, reason string, allocIDs ...string) (*events.ServicesDeregistered, error) {
	var ids []string
	for _, a := range allocIDs {
		list, err := ps.ByAlloc(v, a)
		if err != nil {
			return nil, err
		}
		for _, s := range list {
			ids = append(ids, s.ID)
		}
	}
	return deregistration(ids, reason), nil
}

// ForNode returns the deregistration of every service instance on node,
// with reason, for the command that takes it down or purges it; nil when
// it has none.
func ForNode(v projections.View, node, reason string) (*events.ServicesDeregistered, error) {
	list, err := ps.ByNode(v, node)
	if err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(list))
	for _, s := range list {
		ids = append(ids, s.ID)
	}
	return deregistration(ids, reason), nil
}

func deregistration(ids []string, reason string) *events.ServicesDeregistered {
	if len(ids) == 0 {
		return nil
	}
	return &events.ServicesDeregistered{IDs: ids, Reason: reason}
}
