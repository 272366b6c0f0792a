package events

// KindNodePool is the entity kind of a node pool's events.
const KindNodePool = "nodepool"

// NodePool is a node pool's user-settable fields as events carry them:
// Nomad's NodePool without its Enterprise-only scheduler configuration.
type NodePool struct {
	Name        string            `msgpack:"name" json:"Name"`
	Description string            `msgpack:"desc,omitempty" json:"Description"`
	Meta        map[string]string `msgpack:"meta,omitempty" json:"Meta"`
}

// NodePoolUpserted records a node pool created or updated.
type NodePoolUpserted struct {
	Pool NodePool `msgpack:"pool" json:"NodePool"`
}

// EntityKeys implements Payload.
func (p *NodePoolUpserted) EntityKeys() []Key {
	return []Key{{Kind: KindNodePool, Value: p.Pool.Name}}
}

// NodePoolDeleted records a node pool removed.
type NodePoolDeleted struct {
	Name string `msgpack:"name" json:"Name"`
}

// EntityKeys implements Payload.
func (p *NodePoolDeleted) EntityKeys() []Key {
	return []Key{{Kind: KindNodePool, Value: p.Name}}
}

func init() {
	Register(Type{Name: "NodePoolUpserted", Version: 1, Topic: "NodePool",
		New: func() Payload { return new(NodePoolUpserted) }})
	Register(Type{Name: "NodePoolDeleted", Version: 1, Topic: "NodePool",
		New: func() Payload { return new(NodePoolDeleted) }})
}
