package events

// EvalsPageDeleted deletes one page of the evaluations a filter selects
// (N4). The command carries Filter, From, To and PageSize; the FSM completes
// the event at apply (projections.RegisterExpander) from the state it
// applies to: it walks the evals in creation order from From (up to To,
// when set), keeps those
// Filter selects and that are safe to delete (their job stopped, dead or
// gone, or none of their allocations running or unknown; N6), stops after
// PageSize of them, and records them in IDs, with Next, the creation key
// the next page starts at. The archive therefore holds what was deleted,
// and replaying it needs no other table.
type EvalsPageDeleted struct {
	// Filter is the go-bexpr expression evaluated on each eval (fields as
	// in the API: ID, Namespace, JobID, Status, Type, ...); "" keeps all.
	Filter string `msgpack:"f,omitempty" json:"Filter"`
	// From is the creation key (projections/order.Key) to start at; "" for
	// the oldest eval.
	From string `msgpack:"from,omitempty" json:"From"`
	// To, when set, is the creation key the page ends before: the page
	// is the range [From, To), disjoint from its neighbours, so several
	// pages can be in flight at once. "" ends the page only at the end of
	// the table (or at PageSize or ScanLimit). Events logged before To
	// existed have none.
	To string `msgpack:"to,omitempty" json:"To,omitempty"`
	// PageSize is the most evals the page selects: the walk stops after
	// PageSize evals the filter selected (deleted or skipped) ...
	PageSize int `msgpack:"ps" json:"PageSize"`
	// ScanLimit ... or after ScanLimit evals looked at, so a sparse filter
	// cannot make one apply walk the whole table; 0 is no limit.
	ScanLimit int `msgpack:"sl,omitempty" json:"ScanLimit"`
	// IDs are the evals deleted, filled at apply.
	IDs []string `msgpack:"ids,omitempty" json:"IDs"`
	// Deleted says, for each of IDs in the same order, what the eval was
	// and where it sat: enough for a projection to remove its rows without
	// reading them first. Filled at apply; events logged before it have
	// none, and projections then read the rows.
	Deleted []DeletedEval `msgpack:"del,omitempty" json:"Deleted,omitempty"`
	// Skipped counts evals the filter selected that were not safe to
	// delete, filled at apply.
	Skipped int `msgpack:"sk,omitempty" json:"Skipped"`
	// Next is the creation key after the last eval the page looked at:
	// To when the walk reached To, "" when it reached the end of the
	// table; filled at apply. A Next before To means the page stopped
	// early (PageSize or ScanLimit) and [Next, To) is still to do.
	Next string `msgpack:"next,omitempty" json:"Next"`
}

// DeletedEval is one eval a page delete removed: its job and the index of
// the entry that created it.
type DeletedEval struct {
	Namespace   string `msgpack:"ns" json:"Namespace"`
	JobID       string `msgpack:"job" json:"JobID"`
	CreateIndex uint64 `msgpack:"ci" json:"CreateIndex"`
}

// EntityKeys implements Payload: every deleted eval (none before apply).
func (p *EvalsPageDeleted) EntityKeys() []Key {
	keys := make([]Key, 0, len(p.IDs))
	for _, id := range p.IDs {
		keys = append(keys, Key{Kind: KindEval, Value: id})
	}
	return keys
}

// DeploymentsDeleted records terminal deployments removed by garbage
// collection.
type DeploymentsDeleted struct {
	IDs []string `msgpack:"ids" json:"IDs"`
}

// EntityKeys implements Payload.
func (p *DeploymentsDeleted) EntityKeys() []Key {
	keys := make([]Key, 0, len(p.IDs))
	for _, id := range p.IDs {
		keys = append(keys, Key{Kind: KindDeployment, Value: id})
	}
	return keys
}

func init() {
	Register(Type{Name: "EvalsPageDeleted", Version: 1, Topic: "Evaluation",
		New: func() Payload { return new(EvalsPageDeleted) }})
	Register(Type{Name: "DeploymentsDeleted", Version: 1, Topic: "Deployment",
		New: func() Payload { return new(DeploymentsDeleted) }})
}
