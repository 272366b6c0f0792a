package launcher

import (
	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
)

// ComponentsTable holds the registered components (P10), by id
// ("<kind>/<server>").
const ComponentsTable = "launcher_components"

// Component is a registered component as readers see it: what it runs,
// when it first registered and when it last registered a change (leader
// times, unix nanoseconds; the field keeps its stored name). Its
// liveness is not here: heartbeats live in the leader's memory
// (processors/launcher.Liveness) and append nothing.
type Component struct {
	events.Component `msgpack:"c"`
	Registered       int64  `msgpack:"reg"`
	LastSeen         int64  `msgpack:"seen"`
	CreateIndex      uint64 `msgpack:"-"`
	ModifyIndex      uint64 `msgpack:"-"`
}

func componentRow(r projections.Row) (*Component, error) {
	return stamp(r, "component", func(c *Component, ci, mi uint64) { c.CreateIndex, c.ModifyIndex = ci, mi })
}

// GetComponent returns the component with id, or projections.ErrNotFound.
func GetComponent(v projections.View, id string) (*Component, error) {
	r, err := v.Get(ComponentsTable, id)
	if err != nil {
		return nil, err
	}
	return componentRow(r)
}

// Components returns the components of kind ("" for every kind), by id.
func Components(v projections.View, kind string) ([]*Component, error) {
	prefix := ""
	if kind != "" {
		prefix = kind + "/"
	}
	var out []*Component
	err := v.Scan(ComponentsTable, prefix, false, func(_ string, r projections.Row) error {
		c, err := componentRow(r)
		if err == nil {
			out = append(out, c)
		}
		return err
	})
	return out, err
}

// applyComponent applies the component events.
func (a applier) applyComponent(p events.Payload) error {
	switch e := p.(type) {
	case *events.ComponentRegistered:
		id := e.Component.ComponentID()
		c := &Component{Component: e.Component, Registered: a.tx.Time(), LastSeen: a.tx.Time()}
		if old, err := GetComponent(a.tx.View, id); err == nil {
			c.Registered = old.Registered
		}
		return a.put(ComponentsTable, id, c)
	case *events.ComponentDeregistered:
		_, err := a.tx.Delete(ComponentsTable, events.Component{Kind: e.Kind, Server: e.Server}.ComponentID())
		return err
	}
	return nil
}
