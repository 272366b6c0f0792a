package events

// Capacity on demand (processors/capacity, docs/capacity.md): the
// processor records, with each node request it files, the blocked evals
// it is for, so `ordo history eval <id>` leads to the request and the
// request's history back to the evals.

// CapacityRequested records capacity on demand filing a node request
// (created in the same entry) for the blocked evals of a node pool.
type CapacityRequested struct {
	RequestID string `msgpack:"req" json:"RequestID"`
	// Pool is the node pool short of capacity; Label the launcher label
	// requested for it.
	Pool  string `msgpack:"pool" json:"Pool"`
	Label string `msgpack:"label" json:"Label"`
	// Evals are the blocked evals whose failed placements it is for.
	Evals []string `msgpack:"evals,omitempty" json:"Evals"`
	// Placements and Supply are what the processor counted when it filed:
	// placements failed for lack of capacity, and capacity on its way.
	Placements int `msgpack:"n,omitempty" json:"Placements"`
	Supply     int `msgpack:"supply,omitempty" json:"Supply"`
}

// EntityKeys implements Payload: the request, then every eval.
func (p *CapacityRequested) EntityKeys() []Key {
	keys := []Key{{Kind: KindNodeRequest, Value: p.RequestID}}
	for _, id := range p.Evals {
		keys = append(keys, Key{Kind: KindEval, Value: id})
	}
	return keys
}

func init() {
	Register(Type{Name: "CapacityRequested", Version: 1, Topic: "NodeRequest", New: func() Payload { return new(CapacityRequested) }})
}
